"""A diverging run ends cleanly: stopped, last good weights kept, the divergence recorded."""

import json
from pathlib import Path

import pytest
import torch

from transformer_lab.callbacks.divergence import DivergenceGuard
from transformer_lab.job.run import train
from transformer_lab.training.module import Seq2SeqLitModule

from ..conftest import compose_run
from .conftest import TINY

pytestmark = pytest.mark.slow  # real training runs, one of them diverging

HUGE_LR = [
    *TINY,
    "optim.lr=1e3",
    "optim.schedule=constant",
    "trainer.max_steps=30",
    "trainer.val_check_interval=10",
    "~callbacks.attention_maps",
]


@pytest.fixture(scope="module")
def diverged(tmp_path_factory) -> tuple[Path, dict]:
    """``(run folder, what train returned)`` of the run at the huge learning rate."""
    run = tmp_path_factory.mktemp("diverged") / "run"
    return run, train(compose_run(run, HUGE_LR))


def test_a_huge_learning_rate_stops_the_run_with_diverged_and_the_step_in_metrics_json(diverged):
    run, metrics = diverged
    written = json.loads((run / "metrics.json").read_text())
    assert written["diverged"] is True
    assert 0 < written["diverged_at_step"] < 30
    assert written["global_step"] == written["diverged_at_step"] + 1  # stopped at once
    assert not any(key.startswith("test") for key in written)  # nothing left worth testing
    assert all(not key.startswith("test") for key in metrics)


def test_the_last_good_checkpoint_holds_finite_weights_that_load_with_weights_only(diverged):
    run, _ = diverged
    path = run / "checkpoints" / "last_good.ckpt"
    checkpoint = torch.load(path, weights_only=True)
    assert all(torch.isfinite(w).all() for w in checkpoint["state_dict"].values())
    assert "optimizer_states" not in checkpoint  # the optimizer's moments diverged too
    Seq2SeqLitModule.load_from_checkpoint(path, weights_only=True)


def test_a_normal_run_records_that_it_did_not_diverge(compose_train, tmp_path):
    train(
        compose_train(
            [
                *TINY,
                "trainer.max_steps=4",
                "trainer.val_check_interval=4",
                "~callbacks.attention_maps",
                "~callbacks.norm_comparison",
            ]
        )
    )
    written = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert (written["diverged"], written["diverged_at_step"]) == (False, None)
    assert "test/seq_acc" in written


def test_the_guard_rejects_a_non_positive_loss_factor():
    with pytest.raises(ValueError, match=r"max_loss_factor=0: out of range; allowed: a number > 0"):
        DivergenceGuard(max_loss_factor=0)
