"""Before the Optuna sweeper starts, a worker joins the study in its storage: a new one
records the command that started it, another command is refused, and a trial another
worker runs is left running (only a stale heartbeat fails a trial, tests/sweep/
test_shared_study.py; a real study: tests/e2e/test_shared_study.py)."""

from pathlib import Path

import optuna
import pytest

from transformer_lab.runs.study_record import find
from transformer_lab.sweep.study import ContinuedStudy, load_study, study_storage

from ..command_line import run_train_here

pytestmark = pytest.mark.slow  # real Optuna studies in SQLite

State = optuna.trial.TrialState


@pytest.fixture
def sweep(compose_sweep, tmp_path):
    """``sweep(*overrides)``: the multirun config of a study under ``tmp_path``."""
    return lambda *overrides: compose_sweep(
        ["hparams_search=optuna", f"paths.outputs_root={tmp_path}", *overrides]
    )


def stored_study(config, states: list[State]) -> Path:
    """The study of ``config`` in its storage, with one trial of each of ``states``; the
    worker's sweep folder."""
    folder = Path(config.hydra.sweep.dir)
    ContinuedStudy().on_multirun_start(config)  # a new study: records its command
    study = load_study(folder)
    for state in states:
        trial = study.ask()
        trial.suggest_float("optim.lr", 1e-4, 3e-2, log=True)
        if state == State.COMPLETE:
            study.tell(trial, 0.5)
        elif state == State.FAIL:
            study.tell(trial, state=State.FAIL)
    return folder


def test_a_worker_has_its_own_folder_in_the_study_folder_beside_the_storage(sweep, tmp_path):
    config = sweep()
    ContinuedStudy().on_multirun_start(config)
    worker = Path(config.hydra.sweep.dir)
    study_folder = tmp_path / "multirun" / "study-lr_warmup"
    assert worker.parent == study_folder
    assert find(worker).storage == f"sqlite:///{study_folder / 'optuna.db'}"
    assert find(study_folder) == find(worker)  # the report, given the study's folder
    assert load_study(study_folder).trials == []


def test_a_worker_joining_leaves_the_running_trials_of_others_running(sweep):
    folder = stored_study(sweep(), [State.COMPLETE, State.FAIL, State.RUNNING])
    ContinuedStudy().on_multirun_start(sweep("hydra.sweeper.n_trials=5"))
    states = [t.state for t in load_study(folder).trials]
    assert states == [State.COMPLETE, State.FAIL, State.RUNNING]


def test_another_command_is_refused_before_it_joins_the_study(sweep, capsys):
    stored_study(sweep("model/norm=post"), [State.COMPLETE])
    with pytest.raises(SystemExit) as stop:
        ContinuedStudy().on_multirun_start(sweep("model/norm=pre"))
    assert stop.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (
        "error: hydra.sweeper.study_name=lr_warmup: the study in this storage was started by "
        "other overrides (hparams_search=optuna model/norm=post) than these "
        "(hparams_search=optuna model/norm=pre); allowed: the same overrides to continue it, "
        "or a new hydra.sweeper.study_name"
    )
    url = sweep().hydra.sweeper.storage.url
    assert len(optuna.get_all_study_summaries(study_storage(url))) == 1


def test_another_command_on_the_command_line_leaves_no_worker_folder(sweep, tmp_path):
    """Refused by the check before any folder (the sweep record that every worker folder
    gets is written after it), in one line, exit 2: the study's folder holds its storage
    and the first worker's folder, as before."""
    stored_study(sweep("model/norm=post"), [State.COMPLETE])
    study_folder = tmp_path / "multirun" / "study-lr_warmup"
    before = sorted(p.name for p in study_folder.iterdir())
    command = ["-m", "hparams_search=optuna", "model/norm=pre", "experiment=smoke"]
    refused = run_train_here(tmp_path, *command)
    assert refused.returncode == 2, refused.stderr[-2000:]
    (line,) = [line for line in refused.stderr.splitlines() if line.startswith("error")]
    assert "the study in this storage was started by other overrides" in line
    assert sorted(p.name for p in study_folder.iterdir()) == before
