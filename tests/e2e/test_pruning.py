"""A study's pruner stops a trial that is worse than the others at a validation: the trial
is recorded PRUNED, its run folder kept with the step it stopped at, and the report lists
it apart from the finished trials."""

import json

import optuna
import pytest

from transformer_lab.report import write_report
from transformer_lab.sweep.study import load_study, study_storage

from ..command_line import run_train_here

State = optuna.trial.TrialState
STUDY = [
    *("-m", "hparams_search=optuna", "experiment=smoke", "data=copy"),
    *("trainer.max_steps=10", "trainer.val_check_interval=5", "optimized_metric=val/token_acc"),
    *("~callbacks.progress_bar", "~callbacks.attention_maps", "~callbacks.norm_comparison"),
    "hydra.launcher.n_jobs=1",
]


@pytest.mark.slow
def test_a_trial_worse_than_the_median_at_its_first_validation_is_pruned(tmp_path):
    """The study holds a finished trial with val/token_acc 1.0 at every step and a real one
    (no pruner yet); the median pruner, from one finished trial on, must prune the next
    trial at its first validation, step 5: a tiny model there is far below the mean of 1.0
    and the real trial's value."""
    study_folder = tmp_path / "multirun" / "study-lr_warmup"
    storage = study_storage(study_folder / "optuna.db")
    study = optuna.create_study(study_name="lr_warmup", storage=storage, direction="maximize")
    perfect = study.ask()
    for step in range(11):
        perfect.report(1.0, step)
    study.tell(perfect, 1.0)
    unpruned = run_train_here(tmp_path, *STUDY, "hydra.sweeper.n_trials=2", "pruning.pruner=none")
    assert unpruned.returncode == 0, unpruned.stderr[-3000:]

    pruning = ["hydra.sweeper.n_trials=3", "pruning.pruner=median", "pruning.startup_trials=1"]
    done = run_train_here(tmp_path, *STUDY, *pruning, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    trials = load_study(study_folder).get_trials(deepcopy=False)
    assert [t.state for t in trials] == [State.COMPLETE, State.COMPLETE, State.PRUNED]
    assert list(trials[2].intermediate_values) == [5]  # reported, then pruned
    (first, second) = sorted(p for p in study_folder.iterdir() if p.is_dir())
    assert len(list(first.glob("*/metrics.json"))) == 1
    (job,) = second.glob("*/metrics.json")  # the pruned trial's run folder, kept
    metrics = json.loads(job.read_text())
    assert metrics["global_step"] == 5 and metrics["stopped_early"]
    value = trials[2].intermediate_values[5]
    reason = f"pruned by the study's median pruner at step 5 (val/token_acc {value:.4g})"
    assert metrics["stop_reason"] == reason

    report = write_report(study_folder).read_text()
    assert "1 jobs, 1 finished" in report  # the unpruned trial; the pruned one apart:
    pruned = "## Pruned\n\nTrials the study's pruner stopped early, left out above:\n\n"
    assert f"{pruned}- `{job.parent.name}`: {reason}" in report
