"""A sweep whose seeds cannot decide a rule says so when it starts, one line per rule with
the seeds that could, and still runs; a design that can decide says nothing."""

import logging

import pytest

from transformer_lab.sweep.checks import ConfigCheck
from transformer_lab.sweep.design import (
    out_of_reach,
    seeds_for,
    seeds_to_reach,
    smallest_p,
    smallest_p_of,
)
from transformer_lab.sweep.hypotheses import parse_hypotheses


def test_what_seeds_an_exact_test_can_reach():
    assert [smallest_p(n, n, paired=True) for n in (3, 6, 14)] == [1 / 8, 1 / 64, 1 / 10000]
    assert smallest_p(3, 3, paired=False) == 1 / 20
    assert smallest_p_of("outcome/learned", 3) == 1 / 64  # Boschloo's, n/n against 0/n
    assert seeds_to_reach(0.025, paired=True) == 6
    assert seeds_for("outcome/learned", 0.025) == 3
    assert seeds_for("outcome/learned", 1 / 64) == 3  # exactly at 4^-3: reached
    assert seeds_for("val/loss", 0.05 / 4) == 7


def test_a_sweep_of_too_few_seeds_warns_per_rule_and_still_starts(sweep_config, caplog):
    config = sweep_config(["experiment=depth", "hydra.sweeper.first=3", "hydra.sweeper.budget=3"])
    with caplog.at_level(logging.WARNING, logger="transformer_lab.sweep.checks"):
        ConfigCheck().on_multirun_start(config)  # no SystemExit: a pilot may mean it
    assert [r.getMessage() for r in caplog.records] == [
        f"hypotheses.{rule}.metric: 3 seeds per configuration cannot decide it: no one-sided "
        "p below 0.12 from them, and Holm's first step over the 4 tests of 2 rules asks "
        "0.013; 7 seeds could"
        for rule in ("deep_post_lags_pre", "deepnorm_rescues_post")
    ]


@pytest.mark.parametrize(
    ("overrides", "warned"),
    [
        (["experiment=warmup"], False),  # 16 seeds at its last look: reachable
        # looks at 3 and 5 seeds: 5 pairs give 1/32, Holm asks 0.05 / 2 / 6
        (["experiment=warmup", "hydra.sweeper.first=3", "hydra.sweeper.budget=5"], True),
    ],
    ids=["warmup", "warmup at 3 and 5 seeds"],
)
def test_a_design_that_can_decide_starts_quietly(sweep_config, caplog, overrides, warned):
    with caplog.at_level(logging.WARNING, logger="transformer_lab.sweep.checks"):
        ConfigCheck().on_multirun_start(sweep_config(overrides))
    assert bool(caplog.records) == warned


def rule(rule_id: str, predicted: str = "A better", family: str | None = None, **extra) -> dict:
    return {
        "id": rule_id,
        "claim": "c",
        "source": "s",
        "metric": "val/loss",
        "key": "model.norm",
        "values": ["pre", "post"],
        "predicted": predicted,
        **({"family": family} if family else {}),
        **extra,
    }


def jobs_of(seeds: int, lrs=("1e-3",)) -> list[dict[str, str]]:
    return [
        {"model.norm": norm, "optim.lr": lr, "seed": str(seed)}
        for lr in lrs
        for norm in ("pre", "post")
        for seed in range(seeds)
    ]


def test_holms_first_step_is_asked_of_each_family_as_the_report_adjusts_it():
    """6 pairs give 1/64: enough for a family of one rule (0.05 / 2), not for one of two
    (0.05 / 4), so two rules in one family warn and the same two in families of their own
    do not."""
    together = parse_hypotheses([rule("a"), rule("b", fixed={"optim.lr": "1e-3"})])
    apart = parse_hypotheses(
        [rule("a", family="x"), rule("b", family="y", fixed={"optim.lr": "1e-3"})]
    )
    assert len(out_of_reach(together, jobs_of(6), 0.05)) == 2
    assert out_of_reach(apart, jobs_of(6), 0.05) == []


def test_a_rule_across_keys_counts_its_cells_in_its_family_and_warns_once():
    """Two cells of one rule are two rules of its family (0.05 / 4 asked of 6 pairs' 1/64),
    said in one line, not one per cell."""
    across = parse_hypotheses([rule("a", across=["optim.lr"])])
    assert out_of_reach(across, jobs_of(6, lrs=("1e-3", "2e-3")), 0.05) == [
        "hypotheses.a.metric (all 2 cells): 6 seeds per configuration cannot decide it: no "
        "one-sided p below 0.016 from them, and Holm's first step over the 4 tests of 2 "
        "rules asks 0.013; 7 seeds could"
    ]
    assert out_of_reach(across, jobs_of(7, lrs=("1e-3", "2e-3")), 0.05) == []


def test_an_equivalence_must_reach_the_doubled_p_of_a_difference_beyond_its_margin():
    """6 pairs reach 0.05 / 2 for its equivalence (1/64) but not for a difference beyond the
    margin (2/64): it could be supported, never contradicted; 7 pairs can do both."""
    equivalence = parse_hypotheses([rule("a", predicted="equivalent", margin=0.1)])
    assert out_of_reach(equivalence, jobs_of(6), 0.05) == [
        "hypotheses.a.metric: 6 seeds per configuration can support it but never contradict "
        "it: a difference beyond its margin has no p below 0.031 (the smaller one-sided p "
        "doubled), and Holm's first step over the 2 tests of 1 rules asks 0.025; 7 seeds could"
    ]
    assert out_of_reach(equivalence, jobs_of(7), 0.05) == []
    directional = parse_hypotheses([rule("a")])
    assert out_of_reach(directional, jobs_of(6), 0.05) == []
