"""Ctrl-C (SIGINT), SIGTERM and a cluster's requeue signal (SIGUSR1, SIGUSR2) stop a run
with ``last.ckpt`` at the step reached, whatever the run is doing: setting up, fitting,
validating, testing.

Left to Lightning, Ctrl-C raises KeyboardInterrupt wherever the process happens to be
(possibly between the optimizer step and the scheduler step, a state no checkpoint should
hold), and the run exits 1 with the last periodic ``last.ckpt``, up to 250 steps old. Here
a signal only takes note, and the run acts on it at the next point where a checkpoint
resumes exactly: the end of a training batch (``last.ckpt`` saved through
:class:`~transformer_lab.callbacks.last_checkpoint.LastCheckpoint` and the trainer's atomic
checkpoint IO), or, for a batch that a validation follows, the end of that validation (the
closing one included: ``last.ckpt`` then holds it, and a resume only tests); during the
test, the end of a test batch (with DDP: of the test; ``last.ckpt`` of the fit's end is
where a resume goes on, testing again). There it raises :class:`Interrupted`, which
Lightning passes on after closing the loggers; the job (``job/run.py``) says where it
stopped and how to resume in one line, and ``train`` exits 128 + the signal number (130 for
SIGINT, 143 for SIGTERM). A second Ctrl-C stops at once, without saving. With several DDP
ranks, all stop at the same point. This replaces Lightning's SIGTERM handler, which would
stop in the middle of a validation and exit 0.

From the run folder's opening to its record, a job notes these signals even outside
Lightning's loops (:func:`signals_noted`): one that comes while the run sets up stops the
fit after its first batch; one between the fit and the test, the test after its first
batch; one after the test's last batch is handed on, the record written, to the handler in
place before the job (Python's: KeyboardInterrupt; a sweep stops).

SIGUSR1 and SIGUSR2 are what SLURM sends a job before its time limit or a preemption
(``--signal``); submitit (``hydra/launcher=slurm``) asks for SIGUSR2 from 1.5 on, SIGUSR1
before, and handles it by requeueing the job and exiting. Here such a signal too saves
``last.ckpt`` (or keeps the fit's last one, during the test), and then goes on to the
handler that was in place before the job (:meth:`Interrupted.pass_on`): submitit's
requeues the job, which then resumes from that checkpoint
(:func:`transformer_lab.job.resume.own_last_checkpoint`). Without one (no submitit) the run
exits 138 or 140, like SIGTERM.
"""

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import lightning as L
from lightning.pytorch.callbacks import Checkpoint
from lightning.pytorch.trainer.states import TrainerFn

from transformer_lab.callbacks.last_checkpoint import LastCheckpoint, validation_follows

# what SLURM sends before a time limit or a preemption, where the OS has them (not Windows)
REQUEUE_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGUSR1", "SIGUSR2") if hasattr(signal, name)
)
SIGNALS = (signal.SIGINT, signal.SIGTERM, *REQUEUE_SIGNALS)

_held: int | None = None  # a signal that came while only noted (:func:`_hold`), not acted on
_before_held: dict[int, object] = {}  # a parallel worker's handlers before its first job
_noting = False  # inside a job's :func:`signals_noted`


def _hold(signum: int, frame) -> None:
    """Take note of ``signum`` for the next fit or test to act on; a second Ctrl-C stops
    at once."""
    global _held
    if signum == signal.SIGINT and _held == signal.SIGINT:
        raise KeyboardInterrupt
    _held = signum


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def hold_signals() -> None:
    """Until fit starts, the signals only take note; the next fit then stops at the end of
    its first batch, with ``last.ckpt``. For a parallel sweep's worker, which runs job
    after job: a Ctrl-C between or before fits must neither kill the worker (the sweep
    would kill every job with it, unsaved) nor be forgotten."""
    global _held
    _held = None
    if _in_main_thread():
        for signum in SIGNALS:
            _before_held.setdefault(signum, signal.signal(signum, _hold))


def release_signals(keep: tuple[int, ...] = (signal.SIGINT,)) -> None:
    """Give the signals but ``keep`` back to the handlers they had before
    :func:`hold_signals`: an idle parallel worker ends on SIGTERM, as a process does (an
    orphan of a killed sweep must be stoppable), and still only notes a Ctrl-C, which
    reaches the whole process group while the sweep stops."""
    if _in_main_thread():
        for signum, handler in _before_held.items():
            if signum not in keep:
                signal.signal(signum, handler)


@contextmanager
def signals_noted() -> Iterator[None]:
    """A job's fit, test and record: the signals only take note (see the module's
    docstring); afterwards each gets its handler back, and one noted but not acted on is
    raised again for it."""
    global _held, _noting
    if not _in_main_thread():
        yield
        return
    before = {signum: signal.signal(signum, _hold) for signum in SIGNALS}
    _noting = True
    try:
        yield
    finally:
        _noting = False
        for signum, handler in before.items():
            signal.signal(signum, handler)
        noted, _held = _held, None
        if noted is not None:
            signal.raise_signal(noted)


class Interrupted(BaseException):
    """Training stopped on a signal; ``checkpoint``, saved at ``step``, resumes it.

    A BaseException, like KeyboardInterrupt: no ``except Exception`` may swallow it (a
    sweep goes on past a failing job, not past Ctrl-C).
    """

    def __init__(self, signum: int, step: int, checkpoint: Path):
        super().__init__(f"{signal.Signals(signum).name} at step {step}")
        self.signum, self.step, self.checkpoint = signum, step, checkpoint

    @property
    def exit_code(self) -> int:
        return 128 + self.signum  # what a shell reports for a process the signal killed

    def pass_on(self) -> None:
        """Hand a requeue signal, ``last.ckpt`` saved, to the handler it has outside the
        job (:func:`signals_noted` gave it back): submitit's requeues the job and exits.
        Nothing for another signal, or where the signal has no handler of its own (a plain
        run: it exits with :attr:`exit_code`; a parallel worker: it only notes it)."""
        handler = signal.getsignal(self.signum)
        if self.signum in REQUEUE_SIGNALS and callable(handler) and handler is not _hold:
            handler(self.signum, None)


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


class InterruptCheckpoint(Checkpoint):
    """Saves the run's ``last.ckpt`` and stops when SIGINT, SIGTERM or a requeue signal
    arrives in the fit or the test. A ``Checkpoint`` subclass, which the job puts last
    (``job/run.py``), so that Lightning calls it after every other callback: at a
    validation's end, after ``best.ckpt`` and ``last.ckpt`` took that validation in."""

    SIGNALS = SIGNALS

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
        if not _in_main_thread():
            return  # only the main thread may set handlers; a thread keeps Lightning's way
        for signum in self.SIGNALS:
            previous = signal.signal(signum, self._on_signal)
            self._previous.setdefault(signum, previous)

    def setup(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        """From the start of fit or test: a signal noted before (the job setting up, the
        analysis callbacks' fit-start work, the sanity check, the step between fit and
        test) stops the run at the first point it can."""
        if stage not in (TrainerFn.FITTING, TrainerFn.TESTING):
            return
        last_checkpoint(trainer)  # fails now, not when a signal comes
        global _held
        self.received, _held = _held or self.received, None
        self._install()

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        """Again: Lightning sets its own SIGTERM handler between ``setup`` and here."""
        self._install()

    def on_test_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._install()

    def _restore(self) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    def _requested(self, trainer: L.Trainer) -> bool:
        """Whether a signal asks to stop, on this rank or any other."""
        return trainer.strategy.reduce_boolean_decision(self.received is not None, all=False)

    def _stop(self, trainer: L.Trainer, checkpoint: Path) -> None:
        signum = self.received or signal.SIGTERM  # another rank's signal: SIGTERM's exit
        self.received = None
        raise Interrupted(signum, trainer.global_step, checkpoint)

    def on_train_batch_end(self, trainer: L.Trainer, *args) -> None:
        """Where the periodic ``last.ckpt`` is saved too: a checkpoint taken here resumes
        exactly (tests/e2e/test_interrupt.py); at a batch that a validation follows, the
        stop waits for that validation's end."""
        if self._requested(trainer) and not validation_follows(trainer):
            self._stop(trainer, last_checkpoint(trainer).save(trainer))

    def on_validation_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        fitting = trainer.state.fn == TrainerFn.FITTING and not trainer.sanity_checking
        if fitting and self._requested(trainer):
            self._stop(trainer, last_checkpoint(trainer).save(trainer))

    def on_test_batch_end(self, trainer: L.Trainer, *args) -> None:
        """The fit's ``last.ckpt`` (its end, closing validation included) resumes a test
        stopped here: the resume tests again. One process stops at its next test batch;
        DDP's ranks, whose shares of a test split may differ by a batch (no collective may
        wait per batch), at the test's end."""
        if trainer.world_size == 1 and self.received is not None:
            self._stop(trainer, last_checkpoint(trainer).path(trainer))

    def on_test_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if self._requested(trainer):
            self._stop(trainer, last_checkpoint(trainer).path(trainer))

    def teardown(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        """A signal noted but not acted on (it came after the last point of the stage)
        is handed to the job's :func:`signals_noted`, if the fit runs in one."""
        global _held
        if self.received is not None and _noting:
            _held = self.received
        self.received = None
        self._restore()

    def on_exception(self, trainer: L.Trainer, pl_module: L.LightningModule, exception) -> None:
        self._restore()
