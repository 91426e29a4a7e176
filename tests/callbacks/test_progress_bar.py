"""The training line of the progress bar counts the run's steps (``step 12/20``), across
epochs, instead of Lightning's ``Epoch 1/-2`` with an epoch's batches."""

import lightning as L
import pytest

from transformer_lab.callbacks import StepProgressBar
from transformer_lab.callbacks.progress import CountColumn
from transformer_lab.job.build import build

TINY = ["experiment=smoke", "~callbacks.norm_comparison", "~callbacks.attention_maps"]


class TrainingLine(L.Callback):
    """What the bar's training line shows after each batch."""

    def __init__(self, bar: StepProgressBar):
        self.bar, self.shown = bar, []

    def on_train_batch_end(self, trainer, *args) -> None:
        task = self.bar.progress.tasks[self.bar.train_progress_bar_id]
        self.shown.append((task.description, task.completed, task.total, task.start_time))


@pytest.mark.slow  # a real run of several epochs
def test_the_training_line_counts_the_steps_of_the_whole_run_across_epochs(compose_train):
    cfg = compose_train(TINY)  # 20 steps, 16 batches an epoch
    datamodule, module, trainer = build(cfg)
    (bar,) = [c for c in trainer.callbacks if isinstance(c, StepProgressBar)]
    line = TrainingLine(bar)
    trainer.callbacks.append(line)
    trainer.fit(module, datamodule=datamodule)
    assert [d for d, *_ in line.shown] == [f"step {s:>2}/20" for s in range(1, 21)]
    assert [(done, total) for _, done, total, _ in line.shown] == [(s, 20) for s in range(1, 21)]
    assert len({start for *_, start in line.shown}) == 1  # one line, not one per epoch
    task = bar.progress.tasks[bar.train_progress_bar_id]
    assert str(CountColumn(style="").render(task)) == ""  # the count is in the description
    assert "Epoch" not in task.description
