"""A sweep whose seeds cannot decide a rule says so when it starts, one line per rule with
the seeds that could, and still runs; a design that can decide says nothing."""

import logging

import pytest

from transformer_lab.sweep.checks import ConfigCheck
from transformer_lab.sweep.design import seeds_for, seeds_to_reach, smallest_p, smallest_p_of


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
