"""The report draws the Optuna study kept in a sweep folder: its optimisation history over
the finished trials and, with scikit-learn, the searched parameters' importances; Optuna's
pyplot style stays inside the drawing."""

import importlib.util
import logging
import math

import matplotlib
import optuna
import pytest
from PIL import Image

from transformer_lab.report.study import study_figures
from transformer_lab.report.sweep import Sweep
from transformer_lab.runs.study_record import StudyRecord
from transformer_lab.sweep.study import storage_url, study_storage

State = optuna.trial.TrialState


@pytest.fixture
def kept_study(tmp_path) -> Sweep:
    """A worker's sweep folder recording a study of four finished trials and one failed,
    whose value depends on ``optim.lr`` alone."""
    url = storage_url(tmp_path / "optuna.db")
    StudyRecord(url, "lr_warmup").write(tmp_path)
    study = optuna.create_study(study_name="lr_warmup", storage=study_storage(url))
    for number in range(5):
        trial = study.ask()
        lr = trial.suggest_float("optim.lr", 1e-4, 3e-2, log=True)
        trial.suggest_int("optim.warmup_steps", 100, 1000)
        if number == 2:
            study.tell(trial, state=State.FAIL)
        else:
            study.tell(trial, -abs(math.log10(lr) + 3))
    return Sweep(path=tmp_path, runs=[])


def test_the_history_and_the_importances_of_the_finished_trials_are_drawn(kept_study):
    style = dict(matplotlib.rcParams)
    written = study_figures(kept_study, kept_study.path)
    assert [file for _, file in written] == ["study_history.png", "study_importances.png"]
    assert written[0][0].startswith(
        "Optuna study `lr_warmup`: the objective of each of its 4 finished trials"
    )
    for _, file in written:
        with Image.open(kept_study.path / file) as image:
            assert image.width > 300 and image.height > 100
    assert dict(matplotlib.rcParams) == style  # Optuna's ggplot style did not leak out


def test_without_scikit_learn_the_history_is_drawn_alone_saying_why(
    kept_study, monkeypatch, caplog
):
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == "sklearn" else find_spec(name)
    )
    with caplog.at_level(logging.WARNING):
        written = study_figures(kept_study, kept_study.path)
    assert [file for _, file in written] == ["study_history.png"]
    assert not (kept_study.path / "study_importances.png").exists()
    assert "pip install 'transformer_lab[importances]'" in caplog.text


def test_a_sweep_without_a_study_draws_none(tmp_path):
    assert study_figures(Sweep(path=tmp_path, runs=[]), tmp_path) == []
    assert list(tmp_path.iterdir()) == []
