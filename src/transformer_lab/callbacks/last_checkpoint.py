"""``checkpoints/last.ckpt``: where the run stands, written only where a resume is exact.

It is written at the end of a training batch (the point Lightning resumes from exactly:
``restarted_on_train_batch_end`` in its training epoch loop): every ``every_n_train_steps``
steps, at the fit's final step (:func:`~transformer_lab.training.final_step.is_final_step`), and at
the step where a callback stops the fit early (the divergence guard: the restored weights,
of a run that ``resume.py`` will not resume); a stop requested at a validation (early
stopping) is saved at the end of that validation. So ``last.ckpt`` of
a run that ended is its end, and extending the run from it (``ckpt_path=<last.ckpt>
trainer.max_steps=<more>``) trains the batches an uninterrupted run would.

Lightning's ``ModelCheckpoint(save_last=True)`` does not do this: its end-of-training save
is skipped once any periodic save happened (a 300-step run's ``last.ckpt`` is of step
250), and when it does save, it saves after the fit loop closed, with the epoch counter
already advanced. :class:`~transformer_lab.callbacks.interrupt.InterruptCheckpoint` saves
through this callback on Ctrl-C / SIGTERM. A ``Checkpoint`` subclass, so Lightning runs it
after the other callbacks: it sees a stop they request at the same step.
"""

from pathlib import Path

import lightning as L
from lightning.pytorch.callbacks import Checkpoint
from lightning.pytorch.trainer.states import TrainerFn

from transformer_lab.training.final_step import is_final_step


class LastCheckpoint(Checkpoint):
    FILENAME = "last.ckpt"

    def __init__(self, dirpath: str | None = None, every_n_train_steps: int = 250):
        if every_n_train_steps < 1:
            raise ValueError(f"every_n_train_steps must be >= 1; got {every_n_train_steps}")
        self.dirpath = dirpath
        self.every_n_train_steps = every_n_train_steps
        self._saved_at_step = 0  # no save at step 0; after a resume, its step

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
        self._saved_at_step = trainer.global_step  # a resumed run's checkpoint is that step

    def on_train_batch_end(self, trainer: L.Trainer, *args) -> None:
        if trainer.fast_dev_run:  # a check of the code path: no checkpoints, as Lightning's
            return
        due = trainer.global_step % self.every_n_train_steps == 0
        if due or is_final_step(trainer) or trainer.should_stop:
            self.save(trainer)

    def on_validation_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        """A stop requested at a validation of the fit (early stopping) ends the fit here."""
        fitting = trainer.state.fn == TrainerFn.FITTING and not trainer.sanity_checking
        if fitting and trainer.should_stop and not trainer.fast_dev_run:
            self.save(trainer)
