"""``checkpoints/last.ckpt``: where the run stands, written only where a resume is exact.

It is written where Lightning resumes exactly, at the end of a training batch
(``restarted_on_train_batch_end`` in its training epoch loop), every
``every_n_train_steps`` steps, at the fit's final step
(:func:`~transformer_lab.training.final_step.is_final_step`) and at the step where a
callback stops the fit early (the divergence guard, the stop at the target). A step that
the fit validates after is saved once that validation has ended (its ``on_validation_end``,
after ``best.ckpt`` and every other callback took it in): Lightning never repeats that
validation on a resume, so a checkpoint written before it would resume without it (its
point on the curve, its say in ``best.ckpt``, the stop at the target, and at the final step
the closing validation, whose ``val/*`` go into ``metrics.json``). So ``last.ckpt`` of a
run that ended is its end, closing validation included (the module keeps that validation's
metrics in it, :meth:`~transformer_lab.training.module.Seq2SeqLitModule.on_save_checkpoint`),
and a resume from it trains nothing and validates nothing again: it tests and records. A
kill during that validation finds the previous ``last.ckpt`` and redoes the steps after it,
the validation among them.

Lightning's ``ModelCheckpoint(save_last=True)`` does not do this: its end-of-training save
is skipped once any periodic save happened (a 300-step run's ``last.ckpt`` is of step
250), and when it does save, it saves after the fit loop closed, with the epoch counter
already advanced. :class:`~transformer_lab.callbacks.interrupt.InterruptCheckpoint` saves
through this callback on Ctrl-C / SIGTERM. A ``Checkpoint`` subclass, so Lightning runs it
after the other callbacks; the job (``job/run.py``) puts it after every ``ModelCheckpoint``
too, so that ``last.ckpt`` holds what ``best.ckpt`` took from the validation of its step.
"""

from pathlib import Path

import lightning as L
from lightning.pytorch.callbacks import Checkpoint
from lightning.pytorch.trainer.states import TrainerFn

from transformer_lab.records import stale_temporaries
from transformer_lab.training.final_step import is_final_step


def validation_follows(trainer: L.Trainer) -> bool:
    """Whether the fit validates once the training batch now ending has ended: the rule of
    Lightning's training epoch loop (``_should_check_val_fx``) for the lab's step-bounded
    fits, from public attributes: validation on, in an epoch that validates, and either the
    fit stopping here (its final step, or a callback's request) or the batch the last of a
    ``val_check_interval``. tests/callbacks/test_last_checkpoint.py holds it to Lightning's
    own decision."""
    if not trainer.enable_validation or trainer.sanity_checking:
        return False
    every_n_epochs = trainer.check_val_every_n_epoch
    if every_n_epochs is not None and (trainer.current_epoch + 1) % every_n_epochs:
        return False
    if is_final_step(trainer) or trainer.should_stop:
        return True
    loop = trainer.fit_loop.epoch_loop
    if trainer.val_check_batch == float("inf"):
        return loop.batch_progress.is_last_batch
    batch = loop.total_batch_idx if every_n_epochs is None else loop.batch_idx
    return (batch + 1) % trainer.val_check_batch == 0


class LastCheckpoint(Checkpoint):
    FILENAME = "last.ckpt"

    def __init__(self, dirpath: str | None = None, every_n_train_steps: int = 250):
        if every_n_train_steps < 1:
            raise ValueError(f"every_n_train_steps must be >= 1; got {every_n_train_steps}")
        self.dirpath = dirpath
        self.every_n_train_steps = every_n_train_steps
        self._saved_at_step = 0  # no save at step 0; after a resume, its step
        self._due_at_step: int | None = None  # a save waiting for this step's validation

    def path(self, trainer: L.Trainer) -> Path:
        """``<dirpath>/last.ckpt``, by default ``<default_root_dir>/checkpoints/last.ckpt``."""
        dirpath = Path(self.dirpath or Path(trainer.default_root_dir) / "checkpoints")
        return dirpath / self.FILENAME

    def save(self, trainer: L.Trainer) -> Path:
        """A full resume point of the current step (once per step); its path. Called on
        every rank, as ``trainer.save_checkpoint`` must be (rank zero writes)."""
        path = self.path(trainer)
        if self._saved_at_step != trainer.global_step:
            trainer.save_checkpoint(path, weights_only=False)
            self._saved_at_step = trainer.global_step
        return path

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        """A resumed run's checkpoint is of its step. The temporary files of saves that a
        kill interrupted (never a checkpoint: the rename did not happen) go; one process
        owns the run folder (``job/run_lock.py``), so none is being written."""
        self._saved_at_step = trainer.global_step
        self._due_at_step = None
        if trainer.is_global_zero:
            for temporary in stale_temporaries(self.path(trainer).parent):
                temporary.unlink(missing_ok=True)

    def on_train_batch_end(self, trainer: L.Trainer, *args) -> None:
        if trainer.fast_dev_run:  # a check of the code path: no checkpoints, as Lightning's
            return
        due = trainer.global_step % self.every_n_train_steps == 0
        if not (due or is_final_step(trainer) or trainer.should_stop):
            return
        if validation_follows(trainer):
            self._due_at_step = trainer.global_step
        else:
            self.save(trainer)

    def on_validation_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        """The save of this step, once its validation has ended; and a stop requested at a
        validation of the fit (the stop at the target) ends the fit here."""
        fitting = trainer.state.fn == TrainerFn.FITTING and not trainer.sanity_checking
        due = self._due_at_step == trainer.global_step or trainer.should_stop
        if fitting and due and not trainer.fast_dev_run:
            self.save(trainer)
            self._due_at_step = None
