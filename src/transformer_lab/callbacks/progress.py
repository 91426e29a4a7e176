"""The progress bar: Lightning's rich bar, its training line counting the run's steps.

The lab's runs are bounded by ``trainer.max_steps`` and leave ``max_epochs`` at -1, so
Lightning's training line, which counts an epoch's batches and names the epoch against
``max_epochs - 1``, reads ``Epoch 2/-2``. Here that line counts the optimizer steps of the
whole run instead, ``step 1200/1500``, its bar, time left and speed over the run. Through
Lightning's public hooks only: the columns (``configure_columns``) and the training hooks,
which re-label the line Lightning made with rich's ``Progress.update``.
"""

import lightning as L
from lightning.pytorch.callbacks import RichProgressBar
from lightning.pytorch.callbacks.progress.rich_progress import BatchesProcessedColumn
from rich.progress import Task
from rich.text import Text


class CountColumn(BatchesProcessedColumn):
    """Lightning's ``done/total`` column, empty on a line whose description holds its
    count already (the training line, ``step 1200/1500``)."""

    def render(self, task: Task) -> Text:
        return Text("") if task.fields.get("counted") else super().render(task)


def step_bounded(trainer: L.Trainer) -> bool:
    return trainer.max_steps > 0


class StepProgressBar(RichProgressBar):
    """Lightning's ``RichProgressBar``, its training line ``step <global step>/<max_steps>``
    in a step-bounded run; an epoch-bounded one keeps Lightning's ``Epoch e/E`` line."""

    def configure_columns(self, trainer: L.Trainer) -> list:
        columns = super().configure_columns(trainer)
        count = CountColumn(style=self.theme.batch_progress)
        return [count if isinstance(c, BatchesProcessedColumn) else c for c in columns]

    def on_train_epoch_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if not step_bounded(trainer):
            super().on_train_epoch_start(trainer, pl_module)
            return
        if self.train_progress_bar_id is not None:  # the line goes on across epochs
            return
        super().on_train_epoch_start(trainer, pl_module)  # the fit's first: Lightning makes it
        if self.progress is not None and self.train_progress_bar_id is not None:
            # from the step the run is at (a resumed run: not 0), its speed measured from there
            self.progress.reset(
                self.train_progress_bar_id,
                total=trainer.max_steps,
                completed=trainer.global_step,
                description=self._description(trainer),
                counted=True,
            )
            self.refresh()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx: int) -> None:
        if not step_bounded(trainer):
            super().on_train_batch_end(trainer, pl_module, outputs, batch, batch_idx)
            return
        # Lightning's hook moves its line to ``batch_idx + 1`` (and updates the metrics):
        # this line counts steps, so it is handed the index of the step just done
        super().on_train_batch_end(trainer, pl_module, outputs, batch, trainer.global_step - 1)
        if self.progress is not None and self.train_progress_bar_id is not None:
            description = self._description(trainer)
            self.progress.update(self.train_progress_bar_id, description=description)

    def _description(self, trainer: L.Trainer) -> str:
        """``step 1200/1500``, the step padded to a steady width."""
        step, total = trainer.global_step, trainer.max_steps
        description = f"step {step:>{len(str(total))}}/{total}"
        return f"[{self.theme.description}]{description}" if self.theme.description else description
