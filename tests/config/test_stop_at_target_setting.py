"""``stop_at_seq_acc``: on in the main job, off wherever runs are compared at a fixed
budget, and refused up front when it is no accuracy."""

from pathlib import Path

import pytest
from hydra.core.hydra_config import HydraConfig

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.job.checks import check_run_settings

EXPERIMENTS = sorted(p.stem for p in (Path(__file__).parents[2] / "conf/experiment").glob("*"))


def test_the_main_job_stops_at_its_target_at_two_validations_in_a_row(compose_train):
    cfg = compose_train()
    stop = cfg.callbacks.stop_at_target
    assert (stop.target, stop.validations, cfg.trainer.val_check_interval) == (0.985, 2, 250)


@pytest.mark.parametrize("experiment", [e for e in EXPERIMENTS if e != "paper_base"])
def test_the_bundled_experiments_train_their_whole_budget(compose_train, experiment):
    assert compose_train([f"experiment={experiment}"]).callbacks.stop_at_target.target is None


def test_a_study_trains_every_trial_to_its_end(compose_train):
    assert compose_train(["hparams_search=optuna"]).callbacks.stop_at_target.target is None


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("2", "stop_at_seq_acc=2: out of range; allowed: a number in (0, 1]"),
        ("abc", "stop_at_seq_acc='abc': not a number; allowed: a number in (0, 1]"),
    ],
)
def test_a_target_that_is_no_accuracy_is_refused_before_the_run(compose_train, value, message):
    cfg = compose_train([f"stop_at_seq_acc={value}"])
    with pytest.raises(InvalidSetting) as refused:
        check_run_settings(cfg, HydraConfig.get())
    assert str(refused.value) == message
