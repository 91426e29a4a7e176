"""``last.ckpt`` is where the fit ended, also when a callback stopped it at a validation
(its final step past a periodic save: tests/entry_points/test_evaluate.py)."""

import json

import lightning as L
import pytest
import torch

from transformer_lab.callbacks import LastCheckpoint
from transformer_lab.callbacks.last_checkpoint import validation_follows
from transformer_lab.job.run import train
from transformer_lab.training.final_step import is_final_step

from .conftest import TINY

QUIET = [*TINY, "~callbacks.attention_maps", "~callbacks.norm_comparison"]


def saved_step(run) -> int:
    return torch.load(run / "checkpoints" / "last.ckpt", weights_only=True)["global_step"]


@pytest.mark.slow
def test_a_stop_at_a_validation_saves_last_ckpt_at_that_validation(compose_train, tmp_path):
    stop_at_first_validation = [
        "+callbacks.early_stop._target_=lightning.pytorch.callbacks.EarlyStopping",
        "+callbacks.early_stop.monitor=val/loss",
        "+callbacks.early_stop.stopping_threshold=1e9",  # any val/loss is good enough: stop
    ]
    train(
        compose_train(
            [
                *QUIET,
                *stop_at_first_validation,
                "trainer.max_steps=30",
                "trainer.val_check_interval=6",
                "callbacks.last_checkpoint.every_n_train_steps=4",
            ]
        )
    )
    run = tmp_path / "run"
    assert json.loads((run / "metrics.json").read_text())["global_step"] == 6
    assert saved_step(run) == 6  # not the periodic save at 4


def test_the_period_must_be_positive():
    with pytest.raises(ValueError, match="every_n_train_steps must be >= 1; got 0"):
        LastCheckpoint(every_n_train_steps=0)


class _Tiny(L.LightningModule):
    """A linear model on random numbers: a fit of Lightning's loops and nothing else, which
    stops at its final step as the lab's module does, so that the fit validates there."""

    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(2, 1)

    def training_step(self, batch, batch_idx):
        return self.layer(batch[0]).pow(2).mean()

    def on_train_batch_end(self, outputs, batch, batch_idx):
        if is_final_step(self.trainer):
            self.trainer.should_stop = True

    def validation_step(self, batch, batch_idx):
        self.log("val/loss", self.layer(batch[0]).pow(2).mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


class _Foretold(L.Callback):
    """Each step that :func:`validation_follows` foretold at its batch's end, each step the
    fit validated at; and a stop requested at ``stop_at``."""

    def __init__(self, stop_at: int | None):
        self.foretold, self.validated, self.stop_at = [], [], stop_at

    def on_train_batch_end(self, trainer, *args):
        if trainer.global_step == self.stop_at:
            trainer.should_stop = True
        if validation_follows(trainer):
            self.foretold.append(trainer.global_step)

    def on_validation_end(self, trainer, pl_module):
        if not trainer.sanity_checking:
            self.validated.append(trainer.global_step)


@pytest.mark.parametrize(
    ("settings", "stop_at", "validated"),
    [
        ({"val_check_interval": 10, "check_val_every_n_epoch": None}, None, [10, 20, 25]),
        (
            {"val_check_interval": 0.5, "check_val_every_n_epoch": 1},
            None,
            [3, 6, 10, 13, 17, 20, 24, 25],
        ),
        ({"val_check_interval": 0.5, "check_val_every_n_epoch": 2}, None, [10, 13, 24, 25]),
        ({"val_check_interval": 10, "check_val_every_n_epoch": None}, 13, [10, 13]),
    ],
    ids=["every-10-steps", "half-epochs", "every-2nd-epoch", "stopped-at-13"],
)
def test_the_foretold_validations_are_those_lightning_runs(tmp_path, settings, stop_at, validated):
    """last.ckpt of a step that validates waits for that validation: the foretelling must be
    Lightning's own decision (7 batches an epoch, 25 steps)."""
    data = torch.utils.data.TensorDataset(torch.randn(28, 2))
    loader = torch.utils.data.DataLoader(data, batch_size=4)
    foretold = _Foretold(stop_at)
    silent = {"logger": False, "enable_progress_bar": False, "enable_model_summary": False}
    trainer = L.Trainer(
        max_steps=25, max_epochs=-1, callbacks=[foretold], default_root_dir=tmp_path, **silent,
        enable_checkpointing=False, num_sanity_val_steps=0, **settings,
    )  # fmt: skip
    trainer.fit(_Tiny(), train_dataloaders=loader, val_dataloaders=loader)
    assert foretold.validated == validated
    assert foretold.foretold == validated
