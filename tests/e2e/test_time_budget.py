"""A run with a time budget (``trainer.max_time``) stops at the first step past it, then ends as
at any other end: the closing validation of the weights it stopped with, ``last.ckpt`` of
that step, the test, and ``metrics.json`` saying the budget stopped it. A budget of a
millisecond is past at the first step on any machine (Lightning checks it after each step;
a step of its loop takes longer), so nothing here depends on how fast it runs."""

import json

import pytest
import torch

from ..command_line import run_train_here

pytestmark = pytest.mark.slow


def test_a_spent_time_budget_ends_the_run_as_any_end_does(tmp_path):
    done = run_train_here(
        tmp_path / "outputs",
        "experiment=smoke",
        "trainer.max_time={seconds: 0.001}",
        "~callbacks.progress_bar",
        "~callbacks.norm_comparison",
        "~callbacks.attention_maps",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (run,) = (tmp_path / "outputs" / "runs").iterdir()
    metrics = json.loads((run / "metrics.json").read_text())
    assert (metrics["global_step"], metrics["stopped_early"]) == (1, True)
    assert metrics["stop_reason"].startswith("trainer.max_time spent: ")
    assert metrics["stop_reason"].endswith(" s of fit at step 1")
    assert {"val/loss", "val/seq_acc", "test/loss", "test/seq_acc"} <= set(metrics)
    last = torch.load(run / "checkpoints" / "last.ckpt", weights_only=True, map_location="cpu")
    assert last["global_step"] == 1
