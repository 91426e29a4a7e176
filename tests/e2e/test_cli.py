"""The command line as a user runs it: a single run in a process of its own, what its
terminal shows; a two-job multirun, whose basic launcher runs the jobs in its own process,
in the test process."""

import json
import re

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from ..command_line import run_train, run_train_here

TINY = ["experiment=smoke", "trainer.max_steps=8", "trainer.val_check_interval=4"]


@pytest.mark.slow
def test_multirun_makes_one_folder_per_job_named_by_what_it_varies(tmp_path, read_hparams):
    typed = ["-m", "model/norm=pre,post", *TINY, "~callbacks.attention_maps"]
    result = run_train_here(tmp_path / "outputs", *typed)
    assert result.returncode == 0, result.stderr[-3000:]
    (sweep,) = (tmp_path / "outputs" / "multirun").iterdir()
    runs = sorted(p for p in sweep.iterdir() if p.is_dir())
    # named by what the sweep varies; what every job shares is in sweep.json and .hydra/
    assert [r.name for r in runs] == ["model.norm=post", "model.norm=pre"]
    assert "trainer.max_steps=8" in " ".join(json.loads((sweep / "sweep.json").read_text())["argv"])
    for run, norm in zip(runs, ["post", "pre"], strict=True):
        assert (run / ".hydra" / "overrides.yaml").is_file()
        assert f"norm: {norm}" in (run / "config_resolved.yaml").read_text()
        assert (run / "checkpoints" / "last.ckpt").is_file()
        metrics = json.loads((run / "metrics.json").read_text())
        assert metrics["global_step"] == 8
        assert 0.0 <= metrics["test/seq_acc"] <= 1.0
        # 8 steps learn no whole sequence: stalled by the default rule, 0 in HPARAMS
        assert metrics["val/seq_acc"] < 0.5 and metrics["outcome"] == "stalled"
        assert metrics["outcome_rule"] == "learned: final val/seq_acc >= 0.5"

        events = EventAccumulator(str(run))
        events.Reload()
        experiment, session = read_hparams(run)
        assert {"val/loss", "train/loss", "train/lr", "test/seq_acc"} <= set(
            events.Tags()["scalars"]
        )
        assert {m.name.tag for m in experiment.metric_infos} >= {
            "val/loss",
            "val/seq_acc",
            "outcome/learned",
            "test/seq_acc",
        }
        assert events.Scalars("outcome/learned")[-1].value == 0.0
        assert dict(session.hparams) == {"model.norm": session.hparams["model.norm"]}
        assert session.hparams["model.norm"].string_value == norm  # the one key swept
        # the HPARAMS tab reads each metric's latest scalar: the real final value
        last_val_loss = events.Scalars("val/loss")[-1].value
        assert last_val_loss == pytest.approx(metrics["val/loss"], rel=1e-6)


@pytest.mark.slow
def test_single_run_prints_where_outputs_go_and_ends_with_metrics_and_samples(tmp_path):
    result = run_train(tmp_path / "outputs", *TINY, "samples=3")
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout + result.stderr
    (run,) = (tmp_path / "outputs" / "runs").iterdir()
    assert "tensorboard --logdir" in out
    assert str(run.resolve()) in out
    assert "test/seq_acc" in out
    assert "sample generations" in out
    by_length = re.findall(r"test/seq_acc_by_len/(\d+)", out)
    assert by_length == [str(n) for n in range(3, 11)]  # 3..10 words, in numeric order
    # two library notices a user cannot act on are kept off the terminal
    assert "litlogger" not in out and "LeafSpec" not in out
