"""``python -m tests.docs.regenerate [name ...]``, from the repository's root: every block of
README.md and docs/ that shows what a command prints (or those ``name``\\ d), printed anew on
this machine and written into its doc, each block of numbers with the line that says where
they came from (:mod:`.examples`). One torch thread, as the tests run.

The blocks' commands are the docs' own, run in a temporary folder: one to two minutes on an
idle 2-core CPU (the README's worked sweep, your-data.md's cipher run, and the two sweeps of
docs/sweeps.md). Run it on an idle machine after a change that moves what the docs show;
``git diff`` then shows what moved, and tests/docs/test_examples.py passes again.

It lives with the tests, not in the package: it rewrites the repository's docs, which an
installed package does not have, and shares each block's commands and comparison with the
tests that check the same block.
"""

import shutil
import sys
import tempfile
from pathlib import Path

import torch

from . import blocks
from .examples import BY_NAME, REGENERATE, Runs, provenance


def main(names: list[str]) -> None:
    unknown = [name for name in names if name not in BY_NAME]
    if unknown:
        raise SystemExit(
            f"error: no such example: {', '.join(unknown)}; allowed: {', '.join(BY_NAME)}"
        )
    torch.set_num_threads(1)  # as the tests run, and what the provenance lines say
    root = Path(tempfile.mkdtemp(prefix="docs_examples_"))
    made: dict[str, dict] = {}

    def store(name, make):
        if name not in made:
            folder = root / name
            folder.mkdir()
            made[name] = make(folder)
        return made[name]

    try:
        runs = Runs(root, store)
        for name in names or list(BY_NAME):
            example = BY_NAME[name]
            text = example.make(runs)
            block = blocks.find(example.doc, name)
            blocks.rewrite(block, text, provenance(example, f"python -m {REGENERATE} {name}"))
            print(f"{example.doc}: {name}", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
