"""hparams_search=optuna on the command line: a study that survives failing trials, and
one whose search space or metric is wrong stops before its first trial. The Optuna sweeper
runs its trials in its own process, so these commands run in the test process."""

import json

import pytest
from omegaconf import OmegaConf

from transformer_lab.report.sweep import load_sweep

from ..command_line import run_train_here

STUDY = ["-m", "hparams_search=optuna"]


@pytest.mark.slow
def test_warmups_that_reach_max_steps_stop_the_study_before_its_first_trial(tmp_path):
    typed = ["experiment=smoke", "trainer.max_steps=200", "optim.warmup_steps=choice(0,100,200)"]
    result = run_train_here(tmp_path, *STUDY, *typed, cwd=tmp_path)
    assert result.returncode == 2
    refused = "error: optim.warmup_steps=choice(0,100,200) searches warmups up to 200, not below "
    assert refused + "trainer.max_steps=200; allowed: " in result.stderr
    assert not (tmp_path / "multirun").exists() or not any((tmp_path / "multirun").iterdir())


@pytest.mark.slow
def test_a_misspelt_metric_stops_the_study_before_its_first_trial(tmp_path):
    typed = ["optimized_metric=val/acc", "experiment=smoke"]
    result = run_train_here(tmp_path, *STUDY, *typed, cwd=tmp_path)
    assert result.returncode == 2
    assert "error: optimized_metric='val/acc' is not a metric a run reports" in result.stderr
    assert not (tmp_path / "multirun").exists() or not any((tmp_path / "multirun").iterdir())


@pytest.mark.slow
def test_a_four_trial_study_with_a_failing_trial_completes_and_writes_the_best(
    tmp_path, read_hparams
):
    """TPE seeded with 1 draws warmup_steps -1 (invalid) for the first of four trials only
    (trial n draws from seed + n); the study optimizes val/token_acc, which every trial that
    ran has above 0."""
    typed = [
        "experiment=smoke",
        "data=copy",
        "trainer.max_steps=30",
        "optimized_metric=val/token_acc",
        "hydra.sweeper.n_trials=4",
        "hydra.sweeper.sampler.seed=1",
        "optim.warmup_steps=choice(-1,0,10,20)",
        "~callbacks.progress_bar",
        "~callbacks.attention_maps",
        "~callbacks.norm_comparison",
    ]
    result = run_train_here(tmp_path, *STUDY, *typed, cwd=tmp_path)
    output = result.stdout + result.stderr
    (study_folder,) = (tmp_path / "multirun").iterdir()
    (sweep_dir,) = (p for p in study_folder.iterdir() if p.is_dir())  # the one worker's
    sweep = load_sweep(sweep_dir)
    assert len(sweep.runs) == 4, output[-3000:]
    (failed,) = [r for r in sweep.runs if r.failure]
    assert failed.overrides["optim.warmup_steps"] == "-1"
    assert "optim.warmup_steps=-1: out of range" in failed.failure["message"]
    assert "Failed experiment" not in output  # the study got a number, not a failed trial
    summary = json.loads((sweep_dir / "summary.json").read_text())
    assert (summary["finished"], len(summary["failed"])) == (3, 1)
    assert result.returncode == 1  # a failed job fails the sweep, as in every sweep

    best = OmegaConf.load(sweep_dir / "optimization_results.yaml")
    finished = {r.metrics["val/token_acc"]: r for r in sweep.finished}
    assert min(finished) > 0.0
    assert best.best_value == pytest.approx(max(finished))
    winner = finished[max(finished)]
    assert best.best_params["optim.warmup_steps"] == int(winner.overrides["optim.warmup_steps"])
    assert best.best_params["optim.lr"] == pytest.approx(float(winner.overrides["optim.lr"]))
    for run in sweep.finished:  # HPARAMS mark the searched keys, not the overrides all share
        experiment, _ = read_hparams(run.path)
        differs = {h.name for h in experiment.hparam_infos if h.differs}
        assert differs == {"optim.lr", "optim.warmup_steps"}
