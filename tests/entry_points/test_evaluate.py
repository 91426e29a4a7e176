"""Evaluating a checkpoint: it rebuilds the run from the file alone, reproduces the run's
own test metrics, and turns every kind of bad checkpoint into one clear error."""

import json
import re
import shutil
from pathlib import Path

import lightning
import pytest
import torch

from transformer_lab.evaluate import EvaluationError, cli, evaluate
from transformer_lab.job.run import train

from ..conftest import eval_config

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"
TINY = ["experiment=smoke", "data.test_long_size=48", "data.test_long_max_task_len=13"]


@pytest.mark.slow
def test_evaluating_a_run_reproduces_its_own_test_metrics(compose_train, tmp_path):
    train(compose_train(TINY))
    run = tmp_path / "run"
    (run / ".hydra").mkdir()  # a run folder, as Hydra leaves it
    logged = json.loads((run / "metrics.json").read_text())

    results = evaluate(eval_config(ckpt_path=run, beam_size=2, samples=2))  # the run folder

    assert results["checkpoint"] == str(run / "checkpoints" / "last.ckpt")
    assert results["global_step"] == 20
    assert json.loads((run / "eval.json").read_text()) == results
    tested = {k: v for k, v in logged.items() if k.startswith("test")}
    assert {"test/seq_acc", "test_long/seq_acc", "test_long/seq_acc_by_len/13"} <= set(tested)
    assert results["greedy"] == pytest.approx(tested, rel=1e-9, abs=0)
    assert set(results["beam"]) == set(tested)
    assert results["beam"]["test/loss"] == results["greedy"]["test/loss"]  # teacher-forced

    longer = evaluate(eval_config(ckpt_path=run, samples=0, **{"data.test_long_max_task_len": 15}))
    assert longer["data"] == {"test_long_max_task_len": 15}
    long_lengths = sorted(
        int(k.rpartition("/")[2])
        for k in longer["greedy"]
        if k.startswith("test_long/seq_acc_by_len/")
    )
    assert long_lengths == [11, 12, 13, 14, 15]
    assert longer["greedy"]["test/seq_acc"] == results["greedy"]["test/seq_acc"]  # unchanged
    assert json.loads((run / "eval_test_long_max_task_len=15.json").read_text()) == longer
    assert json.loads((run / "eval.json").read_text()) == results  # not overwritten

    with pytest.raises(
        EvaluationError,
        match=r"data.test_long_max_task_len=64 needs more positions "
        r"than the model has \(max_len=64\); allowed: data.test_long_max_task_len <= 63",
    ):
        evaluate(eval_config(ckpt_path=run, **{"data.test_long_max_task_len": 64}))
    message = "data.test_long_max_task_len=9: not above max_task_len=10"
    with pytest.raises(EvaluationError, match=re.escape(message)):
        evaluate(eval_config(ckpt_path=run, **{"data.test_long_max_task_len": 9}))


@pytest.mark.slow
def test_test_weights_best_tests_the_best_checkpoint_as_evaluate_does(compose_train, tmp_path):
    """Smoke's val/seq_acc is 0.0 at both validations (steps 10, 20), so best.ckpt keeps the
    first (ModelCheckpoint saves on a strict improvement) and the final weights differ."""
    train(compose_train(["experiment=smoke", "test_weights=best"]))
    run = tmp_path / "run"
    (run / ".hydra").mkdir()  # a run folder, as Hydra leaves it
    logged = json.loads((run / "metrics.json").read_text())

    best = evaluate(eval_config(ckpt_path=run, test_weights="best", beam_size=1, samples=0))
    last = evaluate(eval_config(ckpt_path=run, beam_size=1, samples=0))

    assert (logged["weights_tested"], best["weights_tested"], last["weights_tested"]) == (
        "best",
        "best",
        "last",
    )
    assert best["checkpoint"] == str(run / "checkpoints" / "best.ckpt")
    assert (best["global_step"], last["global_step"], logged["global_step"]) == (10, 20, 20)
    tested = {k: v for k, v in logged.items() if k.startswith("test")}
    assert best["greedy"] == pytest.approx(tested, rel=1e-9, abs=0)
    assert abs(last["greedy"]["test/loss"] - tested["test/loss"]) > 1e-3  # not the final weights


@pytest.mark.slow
def test_a_run_past_a_periodic_save_is_evaluated_at_its_final_step(
    compose_train, tmp_path, capsys, caplog
):
    periodic = ["trainer.max_steps=12", "callbacks.last_checkpoint.every_n_train_steps=5"]
    train(compose_train(["experiment=smoke", "trainer.val_check_interval=6", *periodic]))
    run = tmp_path / "run"
    (run / ".hydra").mkdir()  # a run folder, as Hydra leaves it
    logged = json.loads((run / "metrics.json").read_text())
    capsys.readouterr()

    results = evaluate(eval_config(ckpt_path=run, beam_size=1, samples=0))

    assert results["global_step"] == logged["global_step"] == 12  # not the periodic save at 10
    tested = {k: v for k, v in logged.items() if k.startswith("test")}
    assert results["greedy"] == pytest.approx(tested, rel=1e-9, abs=0)
    assert "step 12, length penalty 0.0" in capsys.readouterr().out  # the table's title
    assert "note:" not in caplog.text


def test_a_checkpoint_older_than_the_end_of_its_run_is_said_to_be(
    untrained_checkpoint, tmp_path, capsys, caplog
):
    path, _ = untrained_checkpoint  # of step 7
    run = tmp_path / "run"
    (run / ".hydra").mkdir(parents=True)
    (run / "checkpoints").mkdir()
    shutil.copy(path, run / "checkpoints" / "best.ckpt")
    (run / "metrics.json").write_text(json.dumps({"global_step": 9}))

    results = evaluate(eval_config(ckpt_path=run / "checkpoints" / "best.ckpt", samples=0))

    assert results["global_step"] == 7
    assert "step 7, length penalty 0.0" in capsys.readouterr().out
    assert (
        "note: this checkpoint is of step 7, its run ended at step 9 (metrics.json): not the "
        "run's final weights"
    ) in caplog.messages


def test_a_bad_beam_setting_is_named_before_anything_runs(untrained_checkpoint):
    path, _ = untrained_checkpoint
    with pytest.raises(EvaluationError, match=r"beam_size must be between 1 and 13.*got 0"):
        evaluate(eval_config(ckpt_path=path, beam_size=0))
    assert not (path.parent / "eval.json").exists()


def test_longer_test_lengths_need_a_test_long_split(untrained_checkpoint):
    path, _ = untrained_checkpoint  # its run had no test_long split
    with pytest.raises(EvaluationError, match=r"this run had none, so give data.test_long_size"):
        evaluate(eval_config(ckpt_path=path, **{"data.test_long_max_task_len": 20}))


def test_a_checkpoint_whose_weights_do_not_fit_the_model_is_a_clear_error(untrained_checkpoint):
    path, checkpoint = untrained_checkpoint
    del checkpoint["state_dict"]["model.output.bias"]
    torch.save(checkpoint, path)
    with pytest.raises(EvaluationError, match=r"does not fit this version.*model.output.bias"):
        evaluate(eval_config(ckpt_path=path))


def test_a_setting_this_version_does_not_take_is_a_clear_error(untrained_checkpoint):
    path, checkpoint = untrained_checkpoint  # weights that fit, and one unknown setting
    checkpoint["hyper_parameters"]["model"]["qk_norm"] = True
    torch.save(checkpoint, path)
    with pytest.raises(
        EvaluationError,
        match=r"does not fit this version.*: model.qk_norm=True: TransformerConfig takes no such",
    ):
        evaluate(eval_config(ckpt_path=path))


def test_a_missing_path_or_a_folder_without_checkpoints_is_a_clear_error(tmp_path):
    with pytest.raises(EvaluationError, match=r"does not exist; give a checkpoint file or a run"):
        evaluate(eval_config(ckpt_path=tmp_path / "nowhere.ckpt"))
    with pytest.raises(EvaluationError, match=r"checkpoints/last.ckpt does not exist"):
        evaluate(eval_config(ckpt_path=tmp_path))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not a checkpoint", r"is not a checkpoint of this lab \(torch refuses to unpickle it"),
        ({"state_dict": {}}, r"is not a checkpoint of this lab \(it lacks hyper_parameters, "),
        (
            {
                "state_dict": {},
                "hyper_parameters": {"vocab": 3},
                "datamodule_hyper_parameters": {},
                "pytorch-lightning_version": lightning.__version__,
            },
            r"does not fit this version of transformer_lab: .*missing 1 required keyword-only "
            r"argument: 'compile'",
        ),
    ],
    ids=["text", "foreign", "incompatible"],
)
def test_a_file_that_cannot_rebuild_the_run_is_a_clear_error(tmp_path, content, message):
    path = tmp_path / "some.ckpt"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        torch.save(content, path)
    with pytest.raises(EvaluationError, match=message):
        evaluate(eval_config(ckpt_path=path))


def test_a_misspelt_setting_is_one_error_line_that_names_it(capsys):
    with pytest.raises(SystemExit) as exit:
        cli(["ckpt_path=run", "beem_size=3"])
    assert exit.value.code == 2
    assert capsys.readouterr().err == (
        "error: beem_size is not a setting; allowed: beam_size, batch_size, ckpt_path, "
        "test_weights, length_penalty, samples, accelerator, data.test_path, data.train_path, "
        "data.val_path, data.data_dir, data.test_size, data.test_long_size, "
        "data.test_long_max_task_len, output\n"
    )


def test_help_shows_the_usage_and_the_documented_settings(capsys):
    cli(["--help"])
    said = capsys.readouterr().out
    assert said.startswith("usage: python -m transformer_lab.evaluate (or tlab-eval) ckpt_path=")
    assert said.endswith((CONF_DIR / "evaluate.yaml").read_text())
