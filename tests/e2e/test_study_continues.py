"""``hparams_search=optuna`` keeps its study in a storage of its own: a study stopped after
two trials and started again with the same command (a second worker, after the first) ends
with all its trials in one study and one history, which the report of the study's folder
draws. The Optuna sweeper runs its trials in its own process,
so the two commands run in the test process."""

import subprocess

import optuna
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from transformer_lab.report import write_report
from transformer_lab.sweep.study import load_study, study_storage

from ..command_line import run_train_here

STUDY = [
    *("-m", "hparams_search=optuna", "experiment=smoke", "data=copy"),
    *("trainer.max_steps=10", "trainer.val_check_interval=5", "optimized_metric=val/token_acc"),
    *("~callbacks.progress_bar", "~callbacks.attention_maps", "~callbacks.norm_comparison"),
]


def study(tmp_path, n_trials: int) -> subprocess.CompletedProcess:
    done = run_train_here(tmp_path, *STUDY, f"hydra.sweeper.n_trials={n_trials}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.mark.slow
def test_a_study_stopped_after_two_trials_continues_to_all_four_in_one_history(tmp_path):
    study(tmp_path, n_trials=2)
    again = study(tmp_path, n_trials=4)
    (study_folder,) = (tmp_path / "multirun").iterdir()
    assert study_folder.name == "study-lr_warmup"
    storage = f"sqlite:///{study_folder / 'optuna.db'}"
    assert f"study lr_warmup continues in {storage}: 2 of 4 trials done" in (
        again.stderr + again.stdout
    )

    kept = load_study(study_folder)
    trials = kept.get_trials(deepcopy=False)
    assert [(t.number, t.state) for t in trials] == [
        (n, optuna.trial.TrialState.COMPLETE) for n in range(4)
    ]
    assert len({t.params["optim.lr"] for t in trials}) == 4  # the continued draws are new
    workers = sorted(p for p in study_folder.iterdir() if p.is_dir())
    assert [len(list(w.glob("*/metrics.json"))) for w in workers] == [2, 2]
    assert len(optuna.get_all_study_summaries(study_storage(storage))) == 1

    report = write_report(study_folder).read_text()
    assert "![Optuna study `lr_warmup`: the objective of each of its 4 finished" in report
    assert "(study_history.png)" in report and "(study_importances.png)" in report
    events = EventAccumulator(str(study_folder / "report"), size_guidance={"images": 0})
    events.Reload()
    assert {"report/study_history", "report/study_importances"} <= set(events.Tags()["images"])
