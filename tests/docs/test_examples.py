"""Every block of README.md and docs/ that shows what a command prints says what that command
prints now: its words the same, its numbers within the tolerance its provenance line states
(:mod:`tests.docs.examples`). The blocks of docs/sweeps.md are checked by the tests that run
their sweeps (tests/e2e/test_hypotheses_sweep.py, test_sequential_sweep.py), and the
templates of a line (``stopped at step <n> ...``) by the tests that print it."""

import re

import pytest
import torch

from transformer_lab.data.examples import padded
from transformer_lab.model.decoding import greedy_to_length
from transformer_lab.runs.checkpoint import find_checkpoint, load

from ..built_once import built_once
from . import blocks
from .commands import logical_lines
from .examples import BY_NAME, EXAMPLES, LONGEST_PAIR, Runs, problems

# the blocks that show the form of a line, and the test that prints one
TEMPLATES = {
    "readme-stop-line": "tests/e2e/test_stop_at_target_run.py",
    "run-folder-stop-line": "tests/e2e/test_stop_at_target_run.py",
    "run-folder-finished": "tests/e2e/test_finished_runs.py",
    "run-folder-sigint": "tests/e2e/test_interrupt.py",
}
# the blocks whose commands the examples run: the source, not an output
SOURCES = ("readme-sweep", "your-data-cipher-commands")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("docs_examples")
    return Runs(root, lambda name, make: built_once(tmp_path_factory, name, make)[1])


@pytest.mark.slow
@pytest.mark.parametrize("name", [e.name for e in EXAMPLES if not e.own_test])
def test_the_block_says_what_its_command_prints(runs, name):
    found = problems(name, BY_NAME[name].make(runs))
    assert not found, "\n".join(found)


def cipher(text: str) -> str:
    return "".join(chr((ord(c) - 97 + 3) % 26 + 97) if c.isalpha() else c for c in text)


@pytest.mark.slow
def test_inputs_longer_than_every_training_pair_fail_at_the_first_position_past_them(runs):
    """What run-folder.md says of the six-word inputs, one word past the cipher's training
    lengths (2-5 words): the model ends them where every target it saw had ended, its first
    five words right, and forced to six words it gets the sixth wrong."""
    printed = BY_NAME["run-folder-generate"].make(runs).split("\n")
    echo = next(i for i, line in enumerate(printed) if line.startswith("$ echo"))
    source = re.search(r'echo "([^"]+)"', printed[echo])[1].split()
    assert len(source) == LONGEST_PAIR + 1
    assert printed[echo + 1] == cipher(" ".join(source[:LONGEST_PAIR]))
    module, datamodule, _ = load(find_checkpoint(runs.cipher()["run"], "last"))
    src = padded([datamodule.src_codec.encode(" ".join(source))], [[]])[0]
    target = datamodule.tgt_codec.encode(cipher(" ".join(source)))
    with torch.no_grad():
        forced = greedy_to_length(module.model.eval(), src, torch.tensor([len(target)]))
    words = datamodule.tgt_codec.decode(forced[0, 1:].tolist()).split()
    assert len(words) == LONGEST_PAIR + 1
    assert words[:LONGEST_PAIR] == cipher(" ".join(source[:LONGEST_PAIR])).split()
    assert words[LONGEST_PAIR] != cipher(source[LONGEST_PAIR])


def test_every_marked_block_is_an_example_a_template_or_a_source():
    marked = {
        name
        for doc in [blocks.ROOT / "README.md", *sorted((blocks.ROOT / "docs").glob("*.md"))]
        for name in re.findall(r"<!-- example: ([\w-]+) -->", doc.read_text())
    }
    assert marked == {*BY_NAME, *TEMPLATES, *SOURCES}


def test_a_script_block_splits_into_its_commands():
    script = "mkdir -p a && cat > a/b <<'YAML'\nx: 1\n| y\nYAML\npython -m m \\\n  k=1"
    assert logical_lines(script) == [
        "mkdir -p a && cat > a/b <<'YAML'\nx: 1\n| y\nYAML",
        "python -m m k=1",
    ]
