"""The ``logger=`` and ``debug=`` groups, each on a real (tiny) run of experiment=smoke."""

import csv
import json

import lightning as L
import pandas
import pytest
import torch

from transformer_lab.job.build import build
from transformer_lab.job.run import train
from transformer_lab.runs.learning_curve import read_scalars

pytestmark = pytest.mark.slow  # real training runs

TINY = ["experiment=smoke", "~callbacks.norm_comparison", "~callbacks.attention_maps"]


def rows(path):
    with path.open(newline="") as file:
        return list(csv.DictReader(file))


def test_logger_csv_writes_metrics_csv_in_the_run_folder_and_no_events(compose_train, tmp_path):
    train(compose_train([*TINY, "logger=csv"]))
    run = tmp_path / "run"
    table = rows(run / "metrics.csv")
    losses = [int(r["step"]) for r in table if r["train/loss"]]
    assert losses == [4, 9, 14, 19]  # every log_every_n_steps=5, as TensorBoard gets them
    assert [float(r["val/seq_acc"]) for r in table if r["val/seq_acc"]]  # validations too
    assert not list(run.glob("events.out.tfevents.*"))


def test_logger_many_writes_all_three(compose_train, tmp_path):
    train(compose_train([*TINY, "logger=many"]))
    run = tmp_path / "run"
    assert (run / "metrics.csv").is_file()
    assert list(run.glob("events.out.tfevents.*"))
    assert list(run.glob("wandb/offline-run-*/run-*.wandb"))  # offline in the tests (conftest)


def test_metrics_csv_has_one_row_per_step_and_the_non_time_series_stay_in_tensorboard(
    compose_train, tmp_path
):
    """The norm comparison (step: a layer) and accuracy against length (step: a length)
    are TensorBoard pictures; metrics.csv is a time series, one row per step, a
    validation's values on the row of the training values logged at its step."""
    train(compose_train(["experiment=smoke", "logger=many", "~callbacks.attention_maps"]))
    run = tmp_path / "run"
    table = pandas.read_csv(run / "metrics.csv")
    assert table["step"].is_unique and table["step"].is_monotonic_increasing
    assert table.dropna(subset="train/loss")["step"].tolist() == [4, 9, 14, 19]
    assert table.dropna(subset="val/loss")["step"].tolist() == [9, 19]  # on the train rows
    assert not [c for c in table.columns if c.startswith("norm_init/") or "_vs_len" in c]
    scalars = read_scalars(run)
    assert [step for step, _ in scalars["norm_init/grad/pre/decoder/ffn.w2"]] == [0, 1]  # layers
    assert "norm_init/output_change/post" in scalars
    assert [step for step, _ in scalars["test/seq_acc_vs_len"]] == list(range(3, 11))  # words


def test_metrics_csv_of_a_resumed_run_keeps_the_rows_before_the_checkpoint(compose_train, tmp_path):
    overrides = [*TINY, "logger=csv", "callbacks.last_checkpoint.every_n_train_steps=10"]
    train(compose_train([*overrides, "trainer.max_steps=10"]))
    (tmp_path / "run" / ".hydra").mkdir()  # a run folder, as Hydra leaves it
    last = tmp_path / "run" / "checkpoints" / "last.ckpt"
    train(compose_train([*overrides, f"ckpt_path={last}"], run="second"))
    assert not (tmp_path / "second").exists()  # the resume went on in the run's folder
    table = rows(tmp_path / "run" / "metrics.csv")
    assert [int(r["step"]) for r in table if r["train/loss"]] == [4, 9, 14, 19]


def test_debug_fdr_runs_one_batch_of_each_stage_without_logs(compose_train, tmp_path):
    metrics = train(compose_train(["experiment=smoke", "debug=fdr"]))
    record = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert record["global_step"] == 1
    assert 0.0 <= metrics["test/seq_acc"] <= 1.0
    assert not list((tmp_path / "run").glob("events.out.tfevents.*"))  # Lightning's DummyLogger


def test_debug_fdr_with_test_weights_best_tests_the_final_weights_and_says_so(
    compose_train, tmp_path, caplog
):
    """A fast_dev_run saves no checkpoints, so there is no best.ckpt to test."""
    train(compose_train(["experiment=smoke", "debug=fdr", "test_weights=best"]))
    record = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert record["weights_tested"] == "last"
    assert "test_weights=best: no best.ckpt was saved; testing the final weights" in caplog.text


class FirstSources(L.Callback):
    def __init__(self):
        self.seen = []

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        self.seen.append(batch["src"][0].tolist())


def test_debug_overfit_trains_on_the_same_three_batches_every_epoch(compose_train):
    cfg = compose_train([*TINY, "debug=overfit", "trainer.max_steps=9"])
    L.seed_everything(cfg.seed)
    datamodule, module, trainer = build(cfg)
    seen = FirstSources()
    trainer.callbacks.append(seen)
    trainer.fit(module, datamodule=datamodule)
    assert trainer.num_training_batches == 3
    assert seen.seen[0:3] == seen.seen[3:6] == seen.seen[6:9]
    assert len({str(s) for s in seen.seen}) == 3


def test_debug_profiler_leaves_its_report_in_the_run_folder(compose_train, tmp_path):
    train(compose_train([*TINY, "debug=profiler", "trainer.max_steps=4"]))
    report = (tmp_path / "run" / "fit-profiler.txt").read_text()
    assert "run_training_batch" in report


def test_debug_anomaly_runs_backward_under_anomaly_detection(compose_train):
    cfg = compose_train([*TINY, "debug=anomaly", "trainer.max_steps=2"])
    datamodule, module, trainer = build(cfg)
    enabled = []
    module.on_before_backward = lambda loss: enabled.append(torch.is_anomaly_enabled())
    trainer.fit(module, datamodule=datamodule)
    assert enabled == [True, True]
