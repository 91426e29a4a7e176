"""Expensive things that several test files read (a real sweep, a real run), built once per
test run rather than once per xdist worker.

A package- or session-scoped fixture is built again by every worker that runs one of its
readers. Here the first worker to ask builds into the run's shared temporary folder (the
parent of each worker's own) under a file lock; the others wait on the lock and read what it
built. A build that raised leaves no record, so the next reader builds it again (and fails
the same way, with its own traceback).
"""

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock

RECORD = "built.json"


def shared_temp(tmp_path_factory) -> Path:
    """The temporary folder every worker of this test run shares (this process's own one
    when the run has no xdist workers)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(tmp_path_factory, name: str, build: Callable[[Path], dict]) -> tuple[Path, dict]:
    """``(folder, record)``: ``build(folder)`` run once in this test run, its JSON-ready
    ``record`` kept beside what it built in ``folder``, named ``name``."""
    root = shared_temp(tmp_path_factory) / "built_once"
    root.mkdir(exist_ok=True)
    folder, lock = root / name, root / f"{name}.lock"
    with FileLock(lock):  # on every system (fcntl exists on POSIX only)
        record = folder / RECORD
        if not record.is_file():
            shutil.rmtree(folder, ignore_errors=True)  # what a build that raised left
            folder.mkdir()
            record.write_text(json.dumps(build(folder)))
        return folder, json.loads(record.read_text())


def completed(process: subprocess.CompletedProcess) -> dict:
    """A finished command as a JSON-ready record, for :func:`built_once`."""
    return {
        "args": [str(a) for a in process.args],
        "returncode": process.returncode,
        "stdout": process.stdout,
        "stderr": process.stderr,
    }


def as_completed(record: dict) -> subprocess.CompletedProcess:
    """The finished command that :func:`completed` recorded."""
    return subprocess.CompletedProcess(
        record["args"], record["returncode"], record["stdout"], record["stderr"]
    )
