"""The pieces of a study that workers share: a trial is failed by its stale heartbeat only;
what a job returns becomes its trial's state; a trial's random draws follow its number
(the whole loop: tests/e2e/test_shared_study.py)."""

import math
import time

import optuna
import pytest
from hydra.core.utils import JobReturn, JobStatus

from transformer_lab.sweep.shared_study import fail_stale_trials, heartbeats, tell
from transformer_lab.sweep.study import study_storage
from transformer_lab.sweep.trial_sampler import TrialSeededTPE

State = optuna.trial.TrialState


def new_study(tmp_path, **storage) -> optuna.Study:
    return optuna.create_study(study_name="s", storage=study_storage(tmp_path / "s.db", **storage))


@pytest.mark.slow
def test_only_a_trial_whose_heartbeat_stopped_for_the_grace_period_is_failed(tmp_path):
    study = new_study(tmp_path, heartbeat_interval=1, grace_period=2)
    dead, alive = study.ask(), study.ask()
    with heartbeats(study, [dead]):
        pass  # one heartbeat, then the worker is gone
    with heartbeats(study, [alive]):
        fail_stale_trials(study)  # right away: within the grace period, nothing
        assert [t.state for t in study.trials] == [State.RUNNING, State.RUNNING]
        time.sleep(3)
        fail_stale_trials(study)
        assert [t.state for t in study.trials] == [State.FAIL, State.RUNNING]


def returned(value) -> JobReturn:
    result = JobReturn(status=JobStatus.COMPLETED)
    result.return_value = value
    return result


def test_a_number_completes_a_trial_nan_fails_it_and_a_pruned_trial_stays_pruned(tmp_path):
    study = new_study(tmp_path)
    scored, stopped, pruned = study.ask(), study.ask(), study.ask()
    study.tell(pruned, state=State.PRUNED)  # as the job's pruning callback does
    assert tell(study, scored, returned(0.5))
    assert not tell(study, stopped, returned(math.nan))  # a job the sweep stopped
    assert tell(study, pruned, returned(0.1))
    assert [(t.state, t.value) for t in study.trials] == [
        (State.COMPLETE, 0.5),
        (State.FAIL, None),
        (State.PRUNED, None),
    ]


def draws(tmp_path, name: str, numbers: int, seed: int = 0) -> list[float]:
    """The learning rates a fresh worker's sampler draws for trials 0..numbers-1."""
    storage = study_storage(tmp_path / f"{name}.db")
    study = optuna.create_study(study_name=name, storage=storage, sampler=TrialSeededTPE(seed))
    return [study.ask().suggest_float("lr", 1e-4, 1e-1, log=True) for _ in range(numbers)]


def test_a_trials_draws_follow_its_number_not_the_worker(tmp_path):
    one_worker = draws(tmp_path, "one", 3)
    assert len(set(one_worker)) == 3  # each trial draws anew
    assert draws(tmp_path, "again", 3) == one_worker  # reproducible
    assert draws(tmp_path, "seeded", 3, seed=1)[:2] == one_worker[1:]  # seed + number
