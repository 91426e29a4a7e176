"""metrics.csv (``logger=csv``): one row per step, the rows of a resumed run's first start
kept, as Lightning calls the logger (``log_metrics`` then ``save``, a validation at the
step of the training values logged before it)."""

import csv

from transformer_lab.training.csv_logger import RunCSVLogger


def log(logger, step, **values):
    logger.log_metrics(values, step=step)
    logger.save()


def rows(folder):
    with (folder / "metrics.csv").open(newline="") as file:
        return list(csv.DictReader(file))


def test_a_validation_joins_the_row_of_its_step_and_columns_are_sorted(tmp_path):
    logger = RunCSVLogger(tmp_path)
    log(logger, 4, **{"train/loss": 2.5})
    log(logger, 9, **{"train/loss": 2.0})
    log(logger, 9, **{"val/loss": 1.5, "val/seq_acc": 0.25})
    assert rows(tmp_path) == [
        {"step": "4", "train/loss": "2.5", "val/loss": "", "val/seq_acc": ""},
        {"step": "9", "train/loss": "2.0", "val/loss": "1.5", "val/seq_acc": "0.25"},
    ]


def test_a_resumed_run_appends_to_the_file_with_its_columns(tmp_path):
    first = RunCSVLogger(tmp_path)
    log(first, 4, **{"train/loss": 2.5, "val/loss": 2.0})
    log(first, 9, **{"train/loss": 2.0})
    first.finalize("success")
    resumed = RunCSVLogger(tmp_path)  # a new process, the same run folder
    log(resumed, 9, **{"val/loss": 1.5})  # the closing validation of the first start's step
    log(resumed, 14, **{"train/loss": 1.0})
    log(resumed, 14, **{"test/seq_acc": 0.5})  # a new column: the header grows
    assert rows(tmp_path) == [
        {"step": "4", "test/seq_acc": "", "train/loss": "2.5", "val/loss": "2.0"},
        {"step": "9", "test/seq_acc": "", "train/loss": "2.0", "val/loss": "1.5"},
        {"step": "14", "test/seq_acc": "0.5", "train/loss": "1.0", "val/loss": ""},
    ]


def test_rows_a_killed_run_wrote_after_its_checkpoint_give_way_to_the_resume(tmp_path):
    """Killed at step 19 with its last checkpoint at step 10: the resume trains steps 10 to
    19 again, and their rows are the resume's, once each."""
    killed = RunCSVLogger(tmp_path)
    for step in (4, 9, 14, 19):
        log(killed, step, **{"train/loss": 3.0})
    resumed = RunCSVLogger(tmp_path)
    for step in (14, 19):
        log(resumed, step, **{"train/loss": 1.0})
    assert [(r["step"], r["train/loss"]) for r in rows(tmp_path)] == [
        ("4", "3.0"),
        ("9", "3.0"),
        ("14", "1.0"),
        ("19", "1.0"),
    ]


def test_the_module_settings_go_to_hparams_yaml_beside_the_metrics(tmp_path):
    RunCSVLogger(tmp_path / "run").log_hyperparams({"d_model": 32, "norm": "pre"})
    assert (tmp_path / "run" / "hparams.yaml").read_text() == "d_model: 32\nnorm: pre\n"
