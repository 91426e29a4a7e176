"""What ran a run: ``environment.json`` in every run folder.

The config says what was asked for; this says what answered: the versions of Python and
the libraries, the machine, the thread count, the command line, and, when transformer_lab
runs from a git checkout, the commit and whether the working tree differed from it. A
value that cannot be found is null, never an error: an installed package has no commit.
"""

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

import lightning as L
import torch

import transformer_lab
from transformer_lab.records import read_json, write_json

PACKAGES = ("torch", "lightning", "hydra-core", "omegaconf", "torchmetrics")
CODE_KEYS = ("transformer_lab", "git_commit", "git_dirty")  # what identifies the code


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
    """The commit of the checkout transformer_lab runs from, and whether its tracked files
    differ from it; nulls unless the package sits at ``<checkout>/src/``.

    Untracked files do not count: a ``build/`` that ``pip install .`` leaves, a notes file
    or an output folder would otherwise mark every run of unchanged code "with changes".

    Asking git from the package's folder alone would report the commit of *any* repository
    that happens to hold a virtual environment with an installed copy.
    """
    checkout = package_dir.resolve().parents[1]
    top = _git(checkout, "rev-parse", "--show-toplevel")
    if top is None or Path(top).resolve() != checkout:
        return {"git_commit": None, "git_dirty": None}
    status = _git(checkout, "status", "--porcelain", "--untracked-files=no")
    return {
        "git_commit": _git(checkout, "rev-parse", "HEAD"),
        "git_dirty": None if status is None else status != "",
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


def add_to_tensorboard(loggers, environment: dict) -> None:
    """The record as the text entry ``environment`` (a JSON code block) of each
    TensorBoard logger, beside the run's curves."""
    text = "\n".join("    " + line for line in json.dumps(environment, indent=2).splitlines())
    for logger in loggers:
        if isinstance(logger, L.pytorch.loggers.TensorBoardLogger):
            logger.experiment.add_text("environment", text, global_step=0)


def code_identities(environment: dict) -> set[tuple]:
    """The distinct (version, commit, dirty) a run's starts ran, resumptions included."""
    starts = [environment, *environment.get("resumed", [])]
    return {tuple(start.get(key) for key in CODE_KEYS) for start in starts}
