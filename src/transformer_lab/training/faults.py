"""Faults on purpose, for the fault-injection tests (tests/faults/): at a named moment of a
run the process sends a signal, when ``TRANSFORMER_LAB_FAULT`` asks for one, so that a test
interrupts a run exactly there instead of sleeping and hoping. Unset, as it is everywhere
outside those tests, nothing happens.

``TRANSFORMER_LAB_FAULT=<moment>[@<n>]:<signal>[:parent]``, the moments in a run's order:

- ``setup``: the run folder opened, before the fit;
- ``step@<n>``: the end of training step ``n`` (its batch, before any validation);
- ``checkpoint_save@<n>``: the ``n``-th checkpoint written to its temporary file, not yet
  renamed over its name (``checkpoint_io.py``);
- ``closing_validation``: a batch of the fit's closing validation;
- ``test``: a batch of the test.

``@<n>`` left out means the first time. The signal (``SIGKILL``, ``SIGINT``, ``SIGTERM``,
``SIGUSR1``, ...) goes to this process, or with ``:parent`` to the parallel sweep whose
worker runs the job (while that process lives), once: firing removes the variable from
this process's environment (a command run in the test process gets it back afterwards).
"""

import os
import signal

import lightning as L
from lightning.pytorch.trainer.states import TrainerFn

from transformer_lab.sweep_process import sweep_process

ENVIRONMENT = "TRANSFORMER_LAB_FAULT"
MOMENTS = ("setup", "step", "checkpoint_save", "closing_validation", "test")

_passed: dict[tuple[str, str], int] = {}  # (fault, moment) -> times passed under it


def _wanted() -> tuple[str, int, signal.Signals, bool] | None:
    """The fault the environment asks for: (moment, n, signal, to the parent)."""
    wanted = os.environ.get(ENVIRONMENT)
    if not wanted:
        return None
    where, name, *target = wanted.split(":")
    moment, _, count = where.partition("@")
    if moment not in MOMENTS or target not in ([], ["parent"]):
        raise ValueError(f"{ENVIRONMENT}={wanted!r}: allowed: <moment>[@<n>]:<signal>[:parent]")
    return moment, int(count or 1), signal.Signals[name], target == ["parent"]


def fault_point(moment: str, at: int | None = None) -> None:
    """The run passes ``moment`` (its ``at``-th time, e.g. a step; by default counted
    here): send the signal if the environment asks for it here."""
    wanted = _wanted()
    if wanted is None:
        return
    key = (os.environ[ENVIRONMENT], moment)
    _passed[key] = _passed.get(key, 0) + 1
    name, count, signum, to_parent = wanted
    if name == moment and (_passed[key] if at is None else at) == count:
        del os.environ[ENVIRONMENT]
        sweep = sweep_process()
        if not to_parent:
            os.kill(os.getpid(), signum)
        elif sweep is not None and os.getppid() == sweep:  # never an orphan's adopter
            os.kill(sweep, signum)


def armed() -> bool:
    """Whether this process runs under a fault test."""
    return bool(os.environ.get(ENVIRONMENT))


class FaultPoints(L.Callback):
    """The moments inside Lightning's loops: a training step's end, a batch of the closing
    validation (the one that runs because the fit stops), a batch of the test."""

    def on_train_batch_end(self, trainer: L.Trainer, *args) -> None:
        fault_point("step", trainer.global_step)

    def on_validation_batch_end(self, trainer: L.Trainer, *args) -> None:
        fitting = trainer.state.fn == TrainerFn.FITTING and not trainer.sanity_checking
        if fitting and trainer.should_stop:
            fault_point("closing_validation")

    def on_test_batch_end(self, trainer: L.Trainer, *args) -> None:
        fault_point("test")
