"""What ran a run: ``environment.json`` in every run folder.

The config says what was asked for; this says what answered: the versions of Python and
the libraries, the machine, the thread count, the command line, and, when transformer_lab
runs from a git checkout, the commit, git's id of the code at that commit (the tree of
``src/``) and whether the code differed from it. A value that cannot be found is null,
never an error: an installed package has no commit.

The code, not the commit, says whether two runs ran the same thing (:func:`code_identities`):
a commit that changes only the docs, or a sweep's kept results committed while it runs,
leaves the code as it was, and a sweep continued across such a commit is one sweep.
"""

import hashlib
import json
import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import torch

import transformer_lab
from transformer_lab.records import read_json, write_json

PACKAGES = ("torch", "lightning", "hydra-core", "omegaconf", "torchmetrics")
CODE = "src"  # the checkout's folder that holds the code: the package and its Hydra plugins


def _version(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def _cpu_model() -> str | None:
    """The CPU's marketing name (``platform.processor()`` is empty on most Linux systems)."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or None


def _git(checkout: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(checkout), *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


def git_state(package_dir: Path) -> dict[str, str | bool | None]:
    """The commit of the checkout transformer_lab runs from, git's id of its code there
    (``git_code``: the tree of ``src/``, which a commit of the docs alone leaves as it was),
    and whether the tracked code differs from it (``git_dirty``; ``git_changes``, a hash of
    the difference, tells one edit from another); nulls unless the package sits at
    ``<checkout>/src/``.

    Untracked files do not count: a ``build/`` that ``pip install .`` leaves, a notes file
    or an output folder would otherwise mark every run of unchanged code "with changes";
    nor do tracked files outside ``src/`` (the docs, the tests, a sweep's kept results).

    Asking git from the package's folder alone would report the commit of *any* repository
    that happens to hold a virtual environment with an installed copy.
    """
    checkout = package_dir.resolve().parents[1]
    top = _git(checkout, "rev-parse", "--show-toplevel")
    if top is None or Path(top).resolve() != checkout:
        return {"git_commit": None, "git_code": None, "git_dirty": None, "git_changes": None}
    status = _git(checkout, "status", "--porcelain", "--untracked-files=no", "--", CODE)
    changes = _git(checkout, "diff", "HEAD", "--", CODE) if status else None
    return {
        "git_commit": _git(checkout, "rev-parse", "HEAD"),
        "git_code": _git(checkout, "rev-parse", f"HEAD:{CODE}"),
        "git_dirty": None if status is None else status != "",
        # which changes: two runs of differently edited code are two codes
        "git_changes": hashlib.sha1(changes.encode()).hexdigest() if changes else None,
    }


def collect(command: Sequence[str]) -> dict:
    """This process's environment as JSON-ready values; ``command`` is the command line
    that started the job (``sys.orig_argv``; in a sweep, its process's: ``sweep.json``)."""
    gpus = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    return {
        "start_time": datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds"),
        "command": shlex.join(command),  # interpreter, -m or script, overrides
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "transformer_lab": transformer_lab.__version__,
        **{package: _version(package) for package in PACKAGES},
        **git_state(Path(transformer_lab.__file__).parent),
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),  # torch's kernels: AVX2, ...
        "torch_threads": torch.get_num_threads(),
        "gpus": gpus,
    }


def write(run_dir: Path, environment: dict) -> Path:
    """``environment.json`` in ``run_dir``. A resumed run keeps the first start's record
    and appends its own under ``"resumed"``: a run whose halves ran different code says so.
    """
    path = run_dir / "environment.json"
    first = read_json(path)
    if first is not None:
        first.setdefault("resumed", []).append(environment)
        environment = first
    return write_json(path, environment, "the record of what ran the run")


def add_to_tensorboard(tensorboard_loggers, environment: dict) -> None:
    """The record as the text entry ``environment`` (a JSON code block) of each of a run's
    TensorBoard loggers, beside its curves."""
    text = "\n".join("    " + line for line in json.dumps(environment, indent=2).splitlines())
    for logger in tensorboard_loggers:
        logger.experiment.add_text("environment", text, global_step=0)


def code_identity(start: dict) -> tuple:
    """``(version, kind, id, changes)`` of the code one start of a run ran: its ``git_code``
    (kind ``"code"``), or for a record written before that was kept, its commit; and its
    uncommitted changes (their hash, or for an older record only whether there were any)."""
    kind = "code" if start.get("git_code") else "commit"
    changes = start.get("git_changes") or start.get("git_dirty")
    return start.get("transformer_lab"), kind, start.get(f"git_{kind}"), changes


def code_identities(environment: dict) -> set[tuple]:
    """The distinct :func:`code_identity` of a run's starts, resumptions included."""
    return {code_identity(start) for start in [environment, *environment.get("resumed", [])]}
