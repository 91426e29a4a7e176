"""Settings that cancel each other, each named in one line: a warmup as long as the fit, a
cosine floor at its peak, validation less often than the fit is long (warnings: the run
still trains what it says); a stop below the outcome rule's target (refused: tests/job/
test_checks.py). How the sweep's check prints them: tests/sweep/test_config_check.py."""

import pytest
from hydra.core.hydra_config import HydraConfig

from transformer_lab.job.cancelling_settings import (
    cancelling_settings,
    check_stop_reaches_outcome,
)
from transformer_lab.job.checks import check_config
from transformer_lab.training.schedules import lr_multiplier

MAIN = ["trainer.max_steps=300", "trainer.val_check_interval=100"]


def warnings_of(compose_train, *overrides: str) -> list[str]:
    return cancelling_settings(compose_train([*MAIN, *overrides]))


def test_the_main_job_and_its_settings_cancel_nothing(compose_train):
    assert cancelling_settings(compose_train([])) == []
    assert warnings_of(compose_train, "optim.warmup_steps=100") == []


@pytest.mark.parametrize("schedule", ["linear_warmup", "noam", "cosine"])
def test_a_warmup_as_long_as_the_fit_is_named_with_what_it_cancels(compose_train, schedule):
    (line,) = warnings_of(compose_train, f"optim.schedule={schedule}", "optim.warmup_steps=400")
    assert line == (
        f"optim.warmup_steps=400 >= trainer.max_steps=300: optim.schedule={schedule} never "
        "leaves its warmup (the learning rate ends at 0.75 of optim.lr), and linear_warmup, "
        "noam, cosine train alike; set optim.warmup_steps below 300"
    )
    # what it says: the three schedules' learning rates agree at every step of the fit
    rates = [
        [lr_multiplier(name, 400, 0.1, 300)(step) for step in range(300)]
        for name in ("linear_warmup", "noam", "cosine")
    ]
    assert rates[0] == rates[1] == rates[2]
    assert max(rates[0]) == pytest.approx(0.75)


def test_a_constant_schedule_has_no_warmup_to_outlast_the_fit(compose_train):
    assert warnings_of(compose_train, "optim.schedule=constant", "optim.warmup_steps=400") == []


def test_a_cosine_floor_at_its_peak_is_linear_warmup(compose_train):
    (line,) = warnings_of(compose_train, "optim.warmup_steps=100", "optim.min_lr_ratio=1")
    assert line.startswith("optim.min_lr_ratio=1: the cosine schedule's floor is its peak")
    cosine = [lr_multiplier("cosine", 100, 1.0, 300)(step) for step in range(300)]
    assert cosine == [lr_multiplier("linear_warmup", 100)(step) for step in range(300)]


def test_validation_less_often_than_the_fit_names_the_stop_it_cancels(compose_train):
    (line,) = warnings_of(compose_train, "optim.warmup_steps=100", "trainer.val_check_interval=500")
    assert line == (
        "trainer.val_check_interval=500 > trainer.max_steps=300: the run validates only at "
        "its last step, so its val curves have one point, and stop_at_seq_acc=0.985 never "
        "stops it; set trainer.val_check_interval to 300 or less"
    )
    (unstopped,) = warnings_of(
        compose_train,
        "optim.warmup_steps=100",
        "trainer.val_check_interval=500",
        "stop_at_seq_acc=null",
    )
    assert "stop_at_seq_acc" not in unstopped


def test_a_stop_at_or_above_the_outcome_target_passes(compose_train):
    check_stop_reaches_outcome(compose_train(["stop_at_seq_acc=0.5"]))
    check_stop_reaches_outcome(compose_train(["stop_at_seq_acc=0.3", "outcome.threshold=0.3"]))
    check_stop_reaches_outcome(compose_train(["stop_at_seq_acc=null"]))


def test_the_warnings_leave_the_check_of_a_run_passing(compose_train):
    """A warning is not a refusal: the run's whole check passes."""
    cfg = compose_train([*MAIN, "optim.warmup_steps=400", "experiment=smoke"])
    assert cancelling_settings(cfg)
    check_config(cfg, HydraConfig.get())
