"""experiment=regime is the grid issue 46 asks for, stated before its runs: four rates over
10x, no warmup and two lengths, 6/12/18 layers, two budgets from one run, every headline
claim judged in every cell, a family per claim, and Liu et al.'s claims at 18 layers."""

import pytest

from hydra_plugins.transformer_lab_sequential.sequential_sweeper import SequentialSweeper
from transformer_lab.runs.reader import overrides_of
from transformer_lab.sweep.hypotheses import (
    check_reported,
    expand_across,
    parse_hypotheses,
    reported_by,
)

from .experiment_grid import composed, grid


@pytest.fixture(scope="module")
def regime():
    return composed("regime")


def test_the_grid_spans_the_rates_warmups_depths_and_budgets_issue_46_asks_for(regime):
    params = regime.hydra.sweeper.params
    rates = [float(v) for v in params["optim.lr"].split(",")]
    assert len(rates) >= 4 and max(rates) / min(rates) >= 10
    assert [int(d) for d in params.depth.split(",")] == [6, 12, 18]
    recipes = params.recipe.split(",")
    warmups = {"post_no_warmup": 0, "post_warmup": 100, "post_warmup_400": 400}
    assert set(warmups) <= set(recipes)
    assert regime.optim.schedule == "linear_warmup", "a budget is where a shorter run ends"
    assert list(regime.outcome.at_steps) == [400] and regime.trainer.max_steps == 800
    assert regime.trainer.max_steps % regime.trainer.val_check_interval == 0
    assert regime.hydra.sweeper.first_seed == 2000 and regime.trainer.gradient_clip_val is None


def test_every_headline_claim_is_judged_in_every_cell_at_both_budgets(regime):
    rules = parse_hypotheses(regime.hypotheses)
    cells = expand_across(rules, [overrides_of(cell) for cell in grid(regime)])
    families = {}
    for cell in cells:
        families.setdefault(cell.family, []).append(cell)
    headline = ("post_needs_warmup", "pre_without_warmup_faster", "deep_post_fails")
    for family in headline:
        found = families[family]
        assert len(found) == 4 * 12, family  # 4 rules x (3 depths x 4 rates)
        assert {c.metric for c in found} == {"outcome/learned", "outcome/learned@400"}
    assert len(families["liu_at_18"]) == 3 * 4
    assert all(dict(c.fixed)["depth"] == "18" for c in families["liu_at_18"])


def test_every_rule_names_a_metric_the_grids_jobs_report(regime):
    job = composed("regime", "depth=18", "recipe=admin_warmup_400")
    rules = expand_across(
        parse_hypotheses(regime.hypotheses), [overrides_of(c) for c in grid(regime)]
    )
    check_reported(rules, reported_by(job), "job of the sweep")  # InvalidSetting if not
    assert {"outcome/learned", "outcome/learned@400"} <= reported_by(job)


def test_the_sweep_runs_only_what_its_rules_compare(regime):
    sweeper = SequentialSweeper(None, "seed", 8, 16, 0.05, 2000)
    sweeper.config = regime
    run = sweeper.compared(grid(regime))
    assert len(run) == 6 * 12 + 3 * 4  # six recipes everywhere, admin and the hybrid at 18
    shallow_admin = [c for c in run if "recipe=admin_no_warmup" in c and "depth=6" in c]
    assert shallow_admin == []


@pytest.fixture(scope="module")
def regime_24():
    return composed("regime_24")


def test_the_24_layer_grid_is_regimes_one_depth_deeper_on_seeds_of_its_own(regime, regime_24):
    assert regime_24.model.num_encoder_layers == regime_24.model.num_decoder_layers == 24
    for key in ("data", "optim", "trainer", "outcome"):  # all but the model's depth
        assert regime_24[key] == regime[key], key
    assert regime_24.model.d_model == regime.model.d_model == 32
    params, sweeper = regime_24.hydra.sweeper.params, regime_24.hydra.sweeper
    assert params["optim.lr"] == regime.hydra.sweeper.params["optim.lr"]
    assert params.recipe.split(",") == ["post_warmup_400", "pre_warmup_400", "deepnorm_warmup_400"]
    assert (sweeper.first, sweeper.budget, sweeper.max_minutes) == (8, 16, 30)
    seeds = range(sweeper.first_seed, sweeper.first_seed + sweeper.budget)
    regimes = range(regime.hydra.sweeper.first_seed, regime.hydra.sweeper.first_seed + 16)
    assert not set(seeds) & set(regimes)
    assert regime_24.hydra.sweep.dir.endswith("/multirun/regime_24")


def test_the_24_layer_grid_judges_deep_post_norm_at_every_rate(regime_24):
    rules = parse_hypotheses(regime_24.hypotheses)
    cells = expand_across(rules, [overrides_of(cell) for cell in grid(regime_24)])
    assert {c.family for c in cells} == {"deep_post_fails_at_24"}
    assert len(cells) == 4 * 4  # 4 rules x 4 rates
    assert {c.metric for c in cells} == {"outcome/learned", "outcome/learned@400"}
    job = composed("regime_24", "recipe=deepnorm_warmup_400")
    check_reported(cells, reported_by(job), "job of the sweep")  # InvalidSetting if not
    sweeper = SequentialSweeper(None, "seed", 8, 16, 0.05, 7000)
    sweeper.config = regime_24
    assert len(sweeper.compared(grid(regime_24))) == 3 * 4  # every cell of its grid
