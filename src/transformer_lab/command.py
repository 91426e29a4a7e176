"""The command line the user typed, also inside the worker processes of a parallel sweep.

A ``hydra/launcher=joblib`` job runs in a worker that loky started as
``python -m joblib.externals.loky.backend.popen_loky_posix ...``: its own ``sys.argv`` says
nothing about the sweep, yet ``environment.json`` records the command and an interrupted
job prints the command that resumes it. So the sweep's process hands its command down
through the environment before the workers start, and a worker reads it back, trusting
it only when the process that wrote it is its parent (a stale value inherited from
elsewhere is ignored).
"""

import json
import os
import sys

VARIABLE = "TRANSFORMER_LAB_STARTED_AS"


def hand_down() -> None:
    """Let this process's children know how it was started (before they start)."""
    record = {"pid": os.getpid(), "orig_argv": sys.orig_argv, "argv": sys.argv}
    os.environ[VARIABLE] = json.dumps(record)


def started_as() -> tuple[list[str], list[str]]:
    """``(sys.orig_argv, sys.argv)`` of the process the user started: this one's, or its
    parent's when the parent handed them down."""
    saved = os.environ.get(VARIABLE)
    if saved:
        record = json.loads(saved)
        if record["pid"] == os.getppid():
            return record["orig_argv"], record["argv"]
    return list(sys.orig_argv), list(sys.argv)
