"""``last.ckpt`` is where the fit ended, also when a callback stopped it at a validation
(its final step past a periodic save: tests/entry_points/test_evaluate.py)."""

import json

import pytest
import torch

from transformer_lab.callbacks import LastCheckpoint
from transformer_lab.job.run import train

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
