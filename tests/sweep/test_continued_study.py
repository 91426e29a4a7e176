"""Before the Optuna sweeper starts, the study kept in the sweep folder decides how many
trials are still to go: n_trials counts the whole study."""

from pathlib import Path

import optuna
import pytest

from transformer_lab.sweep.study import ContinuedStudy, load_study, study_storage

pytestmark = pytest.mark.slow  # real Optuna studies of training jobs

State = optuna.trial.TrialState


@pytest.fixture
def sweep(compose_sweep, tmp_path):
    """``sweep(*overrides)``: the multirun config of a study under ``tmp_path``."""
    return lambda *overrides: compose_sweep(
        ["hparams_search=optuna", f"paths.outputs_root={tmp_path}", *overrides]
    )


def stored_study(config, states: list[State]) -> Path:
    """The study of ``config`` in its folder, with one trial of each of ``states``."""
    folder = Path(config.hydra.sweep.dir)
    ContinuedStudy().on_multirun_start(config)  # a new study: records its command
    study = load_study(folder)
    for state in states:
        trial = study.ask()
        trial.suggest_float("model.lr", 1e-4, 3e-2, log=True)
        if state == State.COMPLETE:
            study.tell(trial, 0.5)
        elif state == State.FAIL:
            study.tell(trial, state=State.FAIL)
    return folder


def test_a_new_study_keeps_its_settings(sweep):
    config = sweep()
    ContinuedStudy().on_multirun_start(config)
    assert config.hydra.sweeper.n_trials == 20
    assert config.hydra.sweeper.sampler.seed == 0
    assert Path(config.hydra.sweep.dir).name == "study-lr_warmup"
    assert load_study(Path(config.hydra.sweep.dir)).trials == []


def test_a_continued_study_runs_the_trials_to_go_and_draws_anew(sweep):
    # two finished, one failed (a stopped trial), one left running by a killed sweep
    folder = stored_study(sweep(), [State.COMPLETE, State.COMPLETE, State.FAIL, State.RUNNING])
    again = sweep("hydra.sweeper.n_trials=5")
    ContinuedStudy().on_multirun_start(again)
    assert again.hydra.sweeper.n_trials == 3  # 5 in all, 2 of them done
    assert again.hydra.sweeper.sampler.seed == 4  # past the 4 draws made so far
    states = [t.state for t in load_study(folder).trials]
    assert states == [State.COMPLETE, State.COMPLETE, State.FAIL, State.FAIL]


def test_a_study_with_all_its_trials_runs_none(sweep):
    stored_study(sweep(), [State.COMPLETE, State.COMPLETE])
    again = sweep("hydra.sweeper.n_trials=2")
    ContinuedStudy().on_multirun_start(again)
    assert again.hydra.sweeper.n_trials == 0


def test_another_command_is_refused_before_it_joins_the_study(sweep, capsys):
    stored_study(sweep("model/norm=post"), [State.COMPLETE])
    with pytest.raises(SystemExit) as stop:
        ContinuedStudy().on_multirun_start(sweep("model/norm=pre"))
    assert stop.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (
        "error: hydra.sweeper.study_name=lr_warmup: the study in this folder was started by "
        "other overrides (hparams_search=optuna model/norm=post) than these "
        "(hparams_search=optuna model/norm=pre); allowed: the same overrides to continue it, "
        "or a new hydra.sweeper.study_name"
    )
    assert len(optuna.get_all_study_summaries(study_storage(Path(sweep().hydra.sweep.dir)))) == 1
