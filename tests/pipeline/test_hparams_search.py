"""hparams_search=optuna: a study that survives failing trials, and the number each job
gives the sweeper."""

import json
import subprocess
import sys

import pytest
from hydra_plugins.hydra_optuna_sweeper._impl import create_optuna_distribution_from_override
from omegaconf import OmegaConf, open_dict
from optuna.distributions import IntUniformDistribution, LogUniformDistribution

from transformer_lab.report.sweep import load_sweep
from transformer_lab.sweep.objective import WORST_LOSS, objective, worst_value
from transformer_lab.sweep.search_space import check_warmup_range, largest, search_space
from transformer_lab.training.metric_names import check_optimized_metric


def test_a_job_returns_its_metric_and_a_diverged_one_the_worst_value():
    metrics = {"val/seq_acc": 0.75, "val/loss": 0.5, "diverged": 0.0}
    assert objective("val/seq_acc", metrics) == 0.75
    assert objective("val/loss", metrics) == 0.5
    assert objective("val/seq_acc", metrics | {"diverged": 1.0}) == 0.0
    assert objective("val/loss", metrics | {"diverged": 1.0}) == WORST_LOSS
    assert objective("test_long/seq_acc", metrics) == 0.0  # a split this run did not have


def test_the_worst_value_is_finite_and_on_the_metrics_bad_side():
    assert worst_value("val/token_acc") == 0.0
    assert worst_value("test/ppl") == WORST_LOSS < float("inf")


def test_a_misspelt_metric_or_a_wrong_direction_is_one_clear_error():
    check_optimized_metric("val/seq_acc_best", "maximize")
    with pytest.raises(ValueError, match=r"optimized_metric='val/acc' is not a metric"):
        check_optimized_metric("val/acc")
    with pytest.raises(ValueError, match=r"'val/loss_best' is not a metric"):  # no such value
        check_optimized_metric("val/loss_best")
    with pytest.raises(ValueError, match=r"allowed: hydra.sweeper.direction=minimize"):
        check_optimized_metric("val/loss", "maximize")


@pytest.mark.parametrize(("max_steps", "warmups"), [(200, (0, 100, 10)), (4500, (0, 2250, 225))])
def test_the_searched_warmups_go_from_0_to_half_the_run(compose_sweep, max_steps, warmups):
    cfg = compose_sweep(["hparams_search=optuna", f"trainer.max_steps={max_steps}"])
    space = search_space(cfg)
    low, high, step = warmups
    sweepers = {k: create_optuna_distribution_from_override(o) for k, o in space.items()}
    assert sweepers["model.warmup_steps"] == IntUniformDistribution(low, high, step=step)
    assert sweepers["model.lr"] == LogUniformDistribution(1e-4, 3e-2)
    check_warmup_range(cfg)


def test_searched_warmups_that_reach_max_steps_are_refused(compose_sweep):
    cfg = compose_sweep(["hparams_search=optuna", "trainer.max_steps=200"])
    with open_dict(cfg):  # as typed after -m: the command line wins over the bundled space
        cfg.hydra.overrides.task.append("model.warmup_steps=range(0,600,step=50)")
    assert largest(search_space(cfg)["model.warmup_steps"]) == 600  # the end included
    refused = (
        r"model.warmup_steps=range\(0,600,step=50\) searches warmups up to 600, not below "
        r"trainer.max_steps=200; allowed: warmups below trainer.max_steps, e.g. "
        r"model.warmup_steps=range\(0, 100, step=10\) \(0 to half the run"
    )
    with pytest.raises(ValueError, match=refused):
        check_warmup_range(cfg)
    with open_dict(cfg):
        cfg.hydra.overrides.task.append("model.warmup_steps=100")  # fixed: no search, no check
    check_warmup_range(cfg)


@pytest.mark.slow
def test_warmups_that_reach_max_steps_stop_the_study_before_its_first_trial(
    tmp_path, one_thread_env
):
    study = [sys.executable, "-m", "transformer_lab.train", "-m", "hparams_search=optuna"]
    typed = ["experiment=smoke", "trainer.max_steps=200", "model.warmup_steps=choice(0,100,200)"]
    command = [*study, *typed, f"paths.outputs_root={tmp_path}"]
    result = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, env=one_thread_env, timeout=300
    )
    assert result.returncode == 2
    refused = "error: model.warmup_steps=choice(0,100,200) searches warmups up to 200, not below "
    assert refused + "trainer.max_steps=200; allowed: " in result.stderr
    assert not (tmp_path / "multirun").exists() or not any((tmp_path / "multirun").iterdir())


@pytest.mark.slow
def test_a_misspelt_metric_stops_the_study_before_its_first_trial(tmp_path, one_thread_env):
    command = [
        sys.executable,
        "-m",
        "transformer_lab.train",
        "-m",
        "hparams_search=optuna",
        "optimized_metric=val/acc",
        "experiment=smoke",
        f"paths.outputs_root={tmp_path}",
    ]
    result = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, env=one_thread_env, timeout=300
    )
    assert result.returncode == 2
    assert "error: optimized_metric='val/acc' is not a metric a run reports" in result.stderr
    assert not (tmp_path / "multirun").exists() or not any((tmp_path / "multirun").iterdir())


@pytest.mark.slow
def test_a_four_trial_study_with_a_failing_trial_completes_and_writes_the_best(
    tmp_path, one_thread_env, read_hparams
):
    """TPE seeded with 0 draws warmup_steps -1 (invalid) for the first of four trials only;
    the study optimizes val/token_acc, which every trial that ran has above 0."""
    command = [
        sys.executable,
        "-m",
        "transformer_lab.train",
        "-m",
        "hparams_search=optuna",
        "experiment=smoke",
        "data=copy",
        "trainer.max_steps=30",
        "optimized_metric=val/token_acc",
        "hydra.sweeper.n_trials=4",
        "model.warmup_steps=choice(-1,0,10,20)",
        "~callbacks.progress_bar",
        "~callbacks.attention_maps",
        "~callbacks.norm_comparison",
        f"paths.outputs_root={tmp_path}",
    ]
    result = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, env=one_thread_env, timeout=600
    )
    output = result.stdout + result.stderr
    (sweep_dir,) = (tmp_path / "multirun").iterdir()
    sweep = load_sweep(sweep_dir)
    assert len(sweep.runs) == 4, output[-3000:]
    (failed,) = [r for r in sweep.runs if r.failure]
    assert failed.overrides["model.warmup_steps"] == "-1"
    assert "model.warmup_steps=-1: out of range" in failed.failure["message"]
    assert "Failed experiment" not in output  # the study got a number, not a failed trial
    summary = json.loads((sweep_dir / "summary.json").read_text())
    assert (summary["finished"], len(summary["failed"])) == (3, 1)
    assert result.returncode == 1  # a failed job fails the sweep, as in every sweep

    best = OmegaConf.load(sweep_dir / "optimization_results.yaml")
    finished = {r.metrics["val/token_acc"]: r for r in sweep.finished}
    assert min(finished) > 0.0
    assert best.best_value == pytest.approx(max(finished))
    winner = finished[max(finished)]
    assert best.best_params["model.warmup_steps"] == int(winner.overrides["model.warmup_steps"])
    assert best.best_params["model.lr"] == pytest.approx(float(winner.overrides["model.lr"]))
    for run in sweep.finished:  # HPARAMS mark the searched keys, not the overrides all share
        experiment, _ = read_hparams(run.path)
        differs = {h.name for h in experiment.hparam_infos if h.differs}
        assert differs == {"model.lr", "model.warmup_steps"}
