"""Ctrl-C (SIGINT), SIGTERM and a cluster's requeue signal (SIGUSR1, SIGUSR2) stop training
with ``last.ckpt`` at the step reached.

Left to Lightning, Ctrl-C raises KeyboardInterrupt wherever the process happens to be
(possibly between the optimizer step and the scheduler step, a state no checkpoint
should hold), and the run exits 1 with the last periodic ``last.ckpt``, up to 250 steps
old. Here both signals only set a flag; at the end of the training batch in progress, the
point where the periodic ``last.ckpt`` is written, the callback saves ``last.ckpt`` through
:class:`~transformer_lab.callbacks.last_checkpoint.LastCheckpoint` (and the trainer's
atomic checkpoint IO) and raises :class:`Interrupted`,
which Lightning passes on after closing the loggers; ``train`` turns it into one line and
exit status 128 + the signal number (130 for SIGINT, 143 for SIGTERM). A second Ctrl-C
stops at once, without saving. With several DDP ranks, all stop at the same batch.
During fit this replaces Lightning's SIGTERM handler, which would stop in the middle of a
validation and exit 0.

SIGUSR1 and SIGUSR2 are what SLURM sends a job before its time limit or a preemption
(``--signal``); submitit (``hydra/launcher=slurm``) asks for SIGUSR2 from 1.5 on, SIGUSR1
before, and handles it by requeueing the job and exiting. Here such a signal too saves
``last.ckpt`` at the end of the batch, and then goes on to the handler that was in place
before fit (:meth:`Interrupted.pass_on`): submitit's requeues the job, which then resumes
from that checkpoint (:func:`transformer_lab.job.resume.own_last_checkpoint`). Without
one (no submitit) the run exits 138 or 140, like SIGTERM.
"""

import signal
import threading
from pathlib import Path

import lightning as L

from transformer_lab.callbacks.last_checkpoint import LastCheckpoint

_held: int | None = None  # a signal that came outside fit while :func:`hold_signals` was on


def _hold(signum: int, frame) -> None:
    global _held
    _held = signum


def hold_signals() -> None:
    """Until fit starts, SIGINT and SIGTERM only take note; the next fit then stops at the
    end of its first batch, with ``last.ckpt``. For a parallel sweep's worker, which runs
    job after job: a Ctrl-C between or before fits must neither kill the worker (the sweep
    would kill every job with it, unsaved) nor be forgotten."""
    global _held
    _held = None
    if threading.current_thread() is threading.main_thread():
        for signum in InterruptCheckpoint.SIGNALS:
            signal.signal(signum, _hold)


# what SLURM sends before a time limit or a preemption, where the OS has them (not Windows)
REQUEUE_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGUSR1", "SIGUSR2") if hasattr(signal, name)
)


class Interrupted(BaseException):
    """Training stopped on a signal after saving ``checkpoint`` at ``step``.

    A BaseException, like KeyboardInterrupt: no ``except Exception`` may swallow it (a
    sweep goes on past a failing job, not past Ctrl-C). ``handler``: the one the signal
    had before fit, for a requeue signal (:meth:`pass_on`).
    """

    def __init__(self, signum: int, step: int, checkpoint: Path, handler=None):
        super().__init__(f"{signal.Signals(signum).name} at step {step}")
        self.signum, self.step, self.checkpoint = signum, step, checkpoint
        self.handler = handler

    @property
    def exit_code(self) -> int:
        return 128 + self.signum  # what a shell reports for a process the signal killed

    def pass_on(self) -> None:
        """Hand a requeue signal, ``last.ckpt`` saved, to the handler it had before fit:
        submitit's requeues the job and exits. Nothing for another signal, or where the
        signal had no handler of its own (a plain run: it exits with :attr:`exit_code`)."""
        if self.signum in REQUEUE_SIGNALS and callable(self.handler) and self.handler is not _hold:
            self.handler(self.signum, None)


def last_checkpoint(trainer: L.Trainer) -> LastCheckpoint:
    """The callback that keeps the run's ``last.ckpt``."""
    for callback in trainer.checkpoint_callbacks:
        if isinstance(callback, LastCheckpoint):
            return callback
    raise ValueError(
        "callbacks.interrupt_checkpoint saves the run's last.ckpt, but there is no "
        "LastCheckpoint callback; allowed: keep callbacks.last_checkpoint, or drop the "
        "interrupt checkpoint with ~callbacks.interrupt_checkpoint"
    )


class InterruptCheckpoint(L.Callback):
    """Saves the run's ``last.ckpt`` and stops when SIGINT, SIGTERM or a requeue signal
    arrives in training."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, *REQUEUE_SIGNALS)

    def __init__(self):
        self.received: int | None = None
        self._previous: dict[int, object] = {}  # the handlers before fit, restored after it

    def _on_signal(self, signum: int, frame) -> None:
        if not self._previous or (signum == signal.SIGINT and self.received == signal.SIGINT):
            # outside fit (Lightning may reinstate this handler after it), or a second Ctrl-C
            if signum == signal.SIGINT:
                raise KeyboardInterrupt
            raise SystemExit(128 + signum)
        self.received = signum

    def _install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # only the main thread may set handlers; a thread keeps Lightning's way
        for signum in self.SIGNALS:
            previous = signal.signal(signum, self._on_signal)
            self._previous.setdefault(signum, previous)

    def setup(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        """From the start of fit: a signal during the analysis callbacks' fit-start work or
        the sanity check stops the run at the end of its first batch."""
        if stage == "fit":
            global _held
            last_checkpoint(trainer)  # fails now, not when a signal comes
            self.received, _held = _held, None
            self._install()

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        """Again: Lightning sets its own SIGTERM handler between ``setup`` and here."""
        self._install()

    def _restore(self) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    def on_train_batch_end(self, trainer: L.Trainer, *args) -> None:
        """Where the periodic ``last.ckpt`` is saved too: a checkpoint taken here resumes
        exactly (tests/e2e/test_interrupt.py)."""
        stop = trainer.strategy.reduce_boolean_decision(self.received is not None, all=False)
        if not stop:
            return
        path = last_checkpoint(trainer).save(trainer)  # a full resume point
        signum = self.received or signal.SIGTERM  # another rank's signal: SIGTERM's exit
        raise Interrupted(signum, trainer.global_step, path, self._previous.get(signum))

    def teardown(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        self._restore()

    def on_exception(self, trainer: L.Trainer, pl_module: L.LightningModule, exception) -> None:
        self._restore()
