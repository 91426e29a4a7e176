"""The lab's error rate, by simulation: sweeps in which nothing differs, judged by the
report's own code, must give a false verdict of either kind, ``supported`` or
``contradicted``, in at most the 5% that docs/sweeps.md states: sweeps run the way
``hydra/sweeper=sequential`` runs them (stages of 4, 8 and 16 seeds, seeds added only where
a hypothesis is undecided, judged at every look), and sweeps of a fixed 8 seeds judged
once. Judging every look at the full 5% instead, the same simulation finds more. Each
simulated sweep is two rules (a count of runs that learned, and an area under the
curve), so one family of four one-sided tests; the figures docs/sweeps.md gives are these
runs'."""

import random
from pathlib import Path

import pytest
from scipy import stats

from hydra_plugins.transformer_lab_sequential.sequential_sweeper import _compares
from transformer_lab.report.family import holm
from transformer_lab.report.sweep import Sweep
from transformer_lab.report.verdicts import judge_all, judge_looks
from transformer_lab.runs.reader import Run
from transformer_lab.sweep.hypotheses import Hypothesis
from transformer_lab.sweep.sequential import LEVEL, SequentialDesign

SEQUENTIAL_SWEEPS = 600  # a binomial SE of 0.8% around the 4% they give
FIXED_SWEEPS = 2000  # cheaper: one look at 8 seeds
FIXED_SEEDS = 8  # the fewest whose sign-flip test can pass Holm's first step, 0.05 / 4
RATE = 0.5  # every configuration learns half the time: no difference
GRID = [
    [f"model.norm={norm}", f"optim.warmup_steps={warmup}"]
    for norm in ("post", "pre")
    for warmup in (0, 100)
]
HYPOTHESES = [
    Hypothesis(
        "outcome",
        "",
        "",
        "outcome/learned",
        "optim.warmup_steps",
        ("100", "0"),
        (("model.norm", "post"),),
        "A better",
    ),
    Hypothesis(
        "auc",
        "",
        "",
        "val/seq_acc_auc",
        "model.norm",
        ("pre", "post"),
        (("optim.warmup_steps", "0"),),
        "A better",
    ),
]


def add_runs(runs: list[Run], cell: list[str], seeds: list[str], rng: random.Random) -> None:
    """Runs of the configuration ``cell`` at ``seeds``, drawn alike for every cell."""
    for seed in seeds:
        learned = rng.random() < RATE
        metrics = {
            "outcome": "learned" if learned else "stalled",
            "val/seq_acc_auc": rng.gauss(0.5, 0.1),
        }
        overrides = dict(item.split("=") for item in cell) | {"seed": seed}
        runs.append(Run(Path("/simulated"), overrides, metrics))


def simulate(design: SequentialDesign, rng: random.Random) -> bool:
    """One sequential sweep under no difference; whether any rule was decided, which is
    a false verdict either way."""
    seeds = [str(s) for s in design.seeds]
    runs: list[Run] = []
    cells = GRID
    for stage in design.stages:
        for cell in cells:
            have = sum(
                all(f"{k}={v}" in cell for k, v in r.overrides.items() if k != "seed") for r in runs
            )
            add_runs(runs, cell, seeds[have:stage], rng)
        verdicts = judge_looks(Sweep(Path("/simulated"), runs), HYPOTHESES, design, seeds)
        undecided = [v.hypothesis for v in verdicts if not v.decided]
        cells = [cell for cell in GRID if any(_compares(h, cell) for h in undecided)]
        if not cells:
            break
    return any(v.decided for v in verdicts)


def false_verdicts(simulation, sweeps: int) -> int:
    """How many of ``sweeps`` simulated sweeps gave a false verdict (one stream of draws,
    seeded: the same figures in every run)."""
    rng = random.Random(0)
    return sum(simulation(rng) for _ in range(sweeps))


def within_level(false: int, sweeps: int) -> bool:
    """Whether ``false`` of ``sweeps`` is no evidence of a rate above 5% (a one-sided
    binomial test at 1%): the simulation's own noise is not a failure of the rule."""
    return stats.binomtest(false, sweeps, LEVEL, alternative="greater").pvalue > 0.01


def above_level(false: int, sweeps: int) -> bool:
    """Whether ``false`` of ``sweeps`` shows a rate above 5% (the same test)."""
    return stats.binomtest(false, sweeps, LEVEL, alternative="greater").pvalue < 0.01


@pytest.mark.slow
def test_the_sequential_rule_keeps_any_false_verdict_at_or_below_its_level():
    split = SequentialDesign(first=4, budget=16)  # three looks, each at 0.05 / 3
    false = false_verdicts(lambda rng: simulate(split, rng), SEQUENTIAL_SWEEPS)
    assert within_level(false, SEQUENTIAL_SWEEPS), false  # 25 of 600: 4.2%
    # the same looks each at the full 5%, on the same draws: what the split prevents
    naive = SequentialDesign(first=4, budget=16, level=3 * split.level)
    assert naive.level_per_look == pytest.approx(split.level)
    naive_false = false_verdicts(lambda rng: simulate(naive, rng), SEQUENTIAL_SWEEPS)
    assert naive_false > false, (naive_false, false)  # 48 of 600: 8.0%


def old_rule_decides(verdicts) -> bool:
    """The rule before issue 41: ``supported`` and ``contradicted`` each a Holm family of
    its own, each at 5%."""
    supported = holm([v.p for v in verdicts])
    contradicted = holm([v.p_other for v in verdicts])
    return any(p <= LEVEL for p in supported + contradicted)


@pytest.mark.slow
def test_a_fixed_sweep_keeps_any_false_verdict_at_or_below_its_level_where_two_families_did_not():
    old = []

    def simulation(rng):
        runs: list[Run] = []
        for cell in GRID:
            add_runs(runs, cell, [str(s) for s in range(FIXED_SEEDS)], rng)
        verdicts = judge_all(Sweep(Path("/simulated"), runs), HYPOTHESES)
        old.append(old_rule_decides(verdicts))
        return any(v.decided for v in verdicts)

    false = false_verdicts(simulation, FIXED_SWEEPS)
    assert within_level(false, FIXED_SWEEPS), false  # 87 of 2000: 4.35%
    assert above_level(sum(old), FIXED_SWEEPS), sum(old)  # 154 of 2000: 7.7%
