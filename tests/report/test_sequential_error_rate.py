"""The sequential sweeper's error rate, by simulation: thousands of sweeps in which nothing
differs, run the way ``hydra/sweeper=sequential`` runs them (stages of 4, 8 and 16 seeds,
seeds added only where a hypothesis is undecided), each judged at every look by the
report's own code. The chance of any false ``supported`` must stay at or below the 5% that
docs/sweeps.md states, although each sweep looks three times; judging every look at the full 5%
instead, the same simulation finds more."""

import random
from pathlib import Path

import pytest

from hydra_plugins.transformer_lab_sequential.sequential_sweeper import _compares
from transformer_lab.report.sweep import Sweep
from transformer_lab.report.verdicts import judge_looks
from transformer_lab.runs.reader import Run
from transformer_lab.sweep.hypotheses import Hypothesis
from transformer_lab.sweep.sequential import SequentialDesign

SWEEPS = 2000
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


def simulate(design: SequentialDesign, rng: random.Random) -> bool:
    """One sweep under no difference; whether any hypothesis came out ``supported``."""
    seeds = [str(s) for s in design.seeds]
    runs: list[Run] = []
    cells = GRID
    for stage in design.stages:
        for cell in cells:
            have = sum(
                all(f"{k}={v}" in cell for k, v in r.overrides.items() if k != "seed") for r in runs
            )
            for seed in seeds[have:stage]:
                learned = rng.random() < RATE
                metrics = {
                    "outcome": "learned" if learned else "stalled",
                    "val/seq_acc_auc": rng.gauss(0.5, 0.1),
                }
                overrides = dict(item.split("=") for item in cell) | {"seed": seed}
                runs.append(Run(Path("/simulated"), overrides, metrics))
        verdicts = judge_looks(Sweep(Path("/simulated"), runs), HYPOTHESES, design, seeds)
        undecided = [v.hypothesis for v in verdicts if not v.decided]
        cells = [cell for cell in GRID if any(_compares(h, cell) for h in undecided)]
        if not cells:
            break
    return any(v.word == "supported" for v in verdicts)


@pytest.mark.slow
def test_the_sequential_rule_keeps_false_support_at_or_below_its_level():
    split = SequentialDesign(first=4, budget=16)  # three looks, each at 0.05 / 3
    rng = random.Random(0)
    rate = sum(simulate(split, rng) for _ in range(SWEEPS)) / SWEEPS
    assert rate <= split.level, rate  # about 0.035 (a binomial SE of 0.004)
    # the same looks each at the full 5%: what the split is there to prevent
    naive = SequentialDesign(first=4, budget=16, level=3 * split.level)
    rng = random.Random(0)
    naive_rate = sum(simulate(naive, rng) for _ in range(SWEEPS // 2)) / (SWEEPS // 2)
    assert naive.level_per_look == pytest.approx(split.level)
    assert naive_rate > split.level, naive_rate
