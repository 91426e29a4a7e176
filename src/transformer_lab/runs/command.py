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

from hydra._internal.utils import get_args_parser  # what hydra.main reads the command with
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import OverrideParseException

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


def typed_overrides() -> list[Override]:
    """The overrides of the command the user typed (:func:`started_as`), parsed by Hydra:
    its own argument parser tells them from its flags (``-m``, ``--config-name``, ...).
    None at all in a process that a launcher started by a command of its own (submitit:
    ``python -m submitit.core._submit <folder>``), whose arguments are no overrides."""
    _, argv = started_as()
    typed = get_args_parser().parse_known_args(argv[1:])[0].overrides
    try:
        return OverridesParser.create().parse_overrides(typed)
    except OverrideParseException:
        return []
