"""hparams_search=optuna: the number each job gives the sweeper, the searched warmups and
the optimized metric's check (a real study: tests/e2e/test_optuna_study.py)."""

import pytest
from hydra_plugins.hydra_optuna_sweeper._impl import create_optuna_distribution_from_override
from omegaconf import open_dict
from optuna.distributions import IntUniformDistribution, LogUniformDistribution

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
    assert sweepers["optim.warmup_steps"] == IntUniformDistribution(low, high, step=step)
    assert sweepers["optim.lr"] == LogUniformDistribution(1e-4, 3e-2)
    check_warmup_range(cfg)


def test_searched_warmups_that_reach_max_steps_are_refused(compose_sweep):
    cfg = compose_sweep(["hparams_search=optuna", "trainer.max_steps=200"])
    with open_dict(cfg):  # as typed after -m: the command line wins over the bundled space
        cfg.hydra.overrides.task.append("optim.warmup_steps=range(0,600,step=50)")
    assert largest(search_space(cfg)["optim.warmup_steps"]) == 600  # the end included
    refused = (
        r"optim.warmup_steps=range\(0,600,step=50\) searches warmups up to 600, not below "
        r"trainer.max_steps=200; allowed: warmups below trainer.max_steps, e.g. "
        r"optim.warmup_steps=range\(0, 100, step=10\) \(0 to half the run"
    )
    with pytest.raises(ValueError, match=refused):
        check_warmup_range(cfg)
    with open_dict(cfg):
        cfg.hydra.overrides.task.append("optim.warmup_steps=100")  # fixed: no search, no check
    check_warmup_range(cfg)
