"""Hypotheses with verdicts: each rule the sweep's experiment stated before it ran
(:mod:`transformer_lab.sweep.hypotheses`), judged on the sweep's runs, all of one sweep
under one error rate.

The hypotheses are read from each job's ``.hydra/config.yaml``, Hydra's copy of the config
the job ran with, rather than from the sweep's ``multirun.yaml``: a job's own config is
what its numbers came from, and a folder may gather the jobs of several multiruns (two
``hydra.sweep.dir=`` runs into one folder, as docs/sweeps.md's tuned comparison does), where
``multirun.yaml`` holds the last one's config only. Jobs that state one id with two rules
are refused, as is a rule the sweep cannot evaluate, with the line the sweep's start gives.

Each rule is a one-sided test in the direction it predicted: Boschloo's exact test on the
counts for ``outcome/learned``, the paired t (or Welch's) test otherwise
(:mod:`.comparisons`). The p-values of a sweep's hypotheses are adjusted together by
Holm's method (:mod:`.family`): ``supported`` when the adjusted p-value in the predicted
direction is at most the level (5%), ``contradicted`` when that of the other direction
is, ``inconclusive`` otherwise, with the seeds per configuration that 80% power would
need. A rule with no test to make is ``inconclusive`` with the reason, and still counts
in the family: fewer than three runs on a side (``n=2``), no spread, or diverged runs on
a continuous metric whose rule does not say what they score.

A sequential sweep (``sequential.json`` in its folder) is judged at each of its looks, the
runs of the first n seeds of each configuration, at the level split between the looks; a
hypothesis takes the verdict of the first look that decides it.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from omegaconf import OmegaConf

from transformer_lab.report.comparisons import (
    Comparison,
    compare,
    difference_cell,
    metric_values,
    pairing_cell,
    seeds_text,
)
from transformer_lab.report.family import holm
from transformer_lab.report.proportions import RateDifference
from transformer_lab.report.statistics import MIN_RUNS
from transformer_lab.report.sweep import Sweep
from transformer_lab.report.table import interval_cell, learned_cell, metric_format
from transformer_lab.runs.outcome import LEARNED
from transformer_lab.sweep.hypotheses import (
    Hypothesis,
    check_against_sweep,
    check_reported,
    merged,
    parse_hypotheses,
)
from transformer_lab.sweep.sequential import FILE, LEVEL, SequentialDesign
from transformer_lab.training.metric_names import higher_is_better, metric_range


def read_hypotheses(sweep: Sweep) -> list[Hypothesis]:
    """The hypotheses of the sweep's jobs, checked against the jobs that ran and the
    metrics the finished ones report (InvalidSetting naming the field that is wrong)."""
    given = [r.config_as_given for r in sweep.runs if r.config_as_given is not None]
    lists = [parse_hypotheses(OmegaConf.select(c, "hypotheses", default=None)) for c in given]
    hypotheses = merged(h for found in lists for h in found)
    if hypotheses:
        check_against_sweep(hypotheses, [r.overrides for r in sweep.runs], sweep.replicate_key)
        reported = {metric for run in sweep.finished for metric in run.metrics} | {LEARNED}
        check_reported(hypotheses, reported, "finished run")
    return hypotheses


def untested(comparison: Comparison) -> str | None:
    """Why a rule's comparison cannot be tested (``"n=2"``, ``"no spread"``, ``"2 diverged
    runs left out"``), or None when it can."""
    if comparison.difference is None or comparison.fewest < MIN_RUNS:
        return f"n={comparison.fewest}"
    if comparison.no_spread:
        return "no spread"
    left_out = sum(comparison.left_out)
    if left_out:
        return f"{left_out} diverged run{'s' * (left_out > 1)} without a value; set diverged_value"
    return None


def directional_p(comparison: Comparison, predicted: str) -> tuple[float, float]:
    """The one-sided p-values of the predicted direction and of the other one (1 and 1
    for a comparison with no test)."""
    if untested(comparison):
        return 1.0, 1.0
    found = comparison.difference
    a_better = (found.p_greater, found.p_less)
    if not higher_is_better(comparison.metric):
        a_better = a_better[::-1]
    return a_better if predicted == "A better" else a_better[::-1]


@dataclass(frozen=True)
class Verdict:
    hypothesis: Hypothesis
    comparison: Comparison
    p: float  # one-sided, the predicted direction
    p_other: float  # one-sided, the other direction
    adjusted: float  # Holm over the sweep's hypotheses
    adjusted_other: float
    level: float  # the family-wise level of the look that judged it
    family: int  # hypotheses judged together
    look: int | None = None  # seeds per configuration of a sequential sweep's look

    @property
    def word(self) -> str:
        reason = untested(self.comparison)
        if reason:
            return f"inconclusive ({reason})"
        if self.adjusted <= self.level:
            return "supported"
        if self.adjusted_other <= self.level:
            return "contradicted"
        return "inconclusive"

    @property
    def decided(self) -> bool:
        return self.word in ("supported", "contradicted")

    def seeds_for_power(self) -> int | None:
        """Seeds per configuration for 80% power against the difference observed, at the
        level Holm's first step asks of the family (one-sided)."""
        return self.comparison.difference.seeds_for_power(self.level / self.family)


def judge_all(
    sweep: Sweep, hypotheses: Sequence[Hypothesis], level: float = LEVEL
) -> list[Verdict]:
    """Every hypothesis's verdict, the family's p-values adjusted together."""
    comparisons = [
        compare(sweep, h.metric, h.key, h.values, list(h.fixed), h.diverged_value)
        for h in hypotheses
    ]
    p_values = [directional_p(c, h.predicted) for h, c in zip(hypotheses, comparisons, strict=True)]
    adjusted = holm([p for p, _ in p_values])
    adjusted_other = holm([q for _, q in p_values])
    return [
        Verdict(h, c, p, q, adj, adj_q, level, len(hypotheses))
        for h, c, (p, q), adj, adj_q in zip(
            hypotheses, comparisons, p_values, adjusted, adjusted_other, strict=True
        )
    ]


def sequential_design(sweep: Sweep) -> tuple[SequentialDesign, list[str]] | None:
    """The design of a sequential sweep and its seeds in order, from ``sequential.json``."""
    path = sweep.path / FILE
    if not path.is_file():
        return None
    record = json.loads(path.read_text())
    design = SequentialDesign(
        record["first"], record["budget"], record["level"], record["first_seed"]
    )
    return design, [str(seed) for seed in design.seeds]


def first_seeds(sweep: Sweep, seeds: list[str], n: int) -> Sweep:
    """The sweep as it stood at the look after ``n`` seeds per configuration."""
    kept = set(seeds[:n])
    runs = [r for r in sweep.runs if r.overrides.get(sweep.replicate_key) in kept]
    return Sweep(sweep.path, runs, sweep.replicate_key)


def judge_looks(
    sweep: Sweep, hypotheses: Sequence[Hypothesis], design: SequentialDesign, seeds: list[str]
) -> list[Verdict]:
    """Each hypothesis judged at every look the sweep has reached, at the level per look:
    the first look that decides it, or the last look."""
    ran = {r.overrides.get(sweep.replicate_key) for r in sweep.finished}
    looks = [n for n in design.stages if seeds[n - 1] in ran] or design.stages[:1]
    verdicts: dict[str, Verdict] = {}
    for n in looks:
        for verdict in judge_all(first_seeds(sweep, seeds, n), hypotheses, design.level_per_look):
            known = verdicts.get(verdict.hypothesis.id)
            if known is None or not known.decided:
                verdicts[verdict.hypothesis.id] = replace(verdict, look=n)
    return [verdicts[h.id] for h in hypotheses]


def judge_sweep(sweep: Sweep, hypotheses: Sequence[Hypothesis]) -> list[Verdict]:
    """The sweep's verdicts: at its looks if it is sequential, else at once."""
    if not hypotheses:
        return []
    sequential = sequential_design(sweep)
    if sequential is None:
        return judge_all(sweep, hypotheses)
    return judge_looks(sweep, hypotheses, *sequential)


def _side_cell(runs, h: Hypothesis) -> str:
    if h.metric == LEARNED:
        return learned_cell(runs) if runs else "no runs"
    values = metric_values(runs, h.metric, h.diverged_value)
    return interval_cell(values, metric_format(h.metric), metric_range(h.metric))


def verdict_lines(verdict: Verdict) -> list[str]:
    """A bullet: the verdict, the claim and its source, then the numbers behind it."""
    h, found = verdict.hypothesis, verdict.comparison
    sides = [
        f"{name} = {value}: {_side_cell(runs, h)}"
        for name, value, runs in (("A", h.values[0], found.a), ("B", h.values[1], found.b))
    ]
    held = ", ".join(f"{k}={v}" for k, v in h.fixed)
    rule = f"`{h.metric}` by `{h.key}`" + (f" with {held}" if held else "")
    test = "Boschloo" if isinstance(found.difference, RateDifference) else "t"
    result = f"A − B {difference_cell(found)} ({pairing_cell(found)})"
    if not untested(found):
        result += (
            f"; one-sided {test} p = {verdict.p:.2g}, Holm-adjusted {verdict.adjusted:.2g} "
            f"(other direction {verdict.adjusted_other:.2g}) against {verdict.level:.3g}"
        )
        if not verdict.decided:
            result += f"; {seeds_text(verdict.seeds_for_power(), ' at this level')}"
    look = f" after {verdict.look} seeds" if verdict.look else ""
    return [
        f"- **{verdict.word}**{look} `{h.id}`: {h.claim} ({h.source})",
        f"  {rule}: {'; '.join(sides)}; {result}; predicted: {h.predicted}.",
    ]


def hypotheses_section(verdicts: Sequence[Verdict]) -> list[str]:
    """The report's first section: a bullet per verdict (none without hypotheses)."""
    if not verdicts:
        return []
    first = verdicts[0]
    looks = (
        f" This sweep added seeds in stages and looked after each (seeds per configuration at "
        f"the looks: see each verdict); each look is at {first.level:.3g}, the level split "
        "between the looks, so that the chance of any false verdict over all of them stays "
        "at 5%."
        if first.look
        else ""
    )
    return [
        "",
        "## Hypotheses",
        "",
        "What the experiment predicted before it ran, each a one-sided test in the direction "
        f"predicted: Boschloo's exact test on the counts of runs that learned for `{LEARNED}` "
        "(a diverged run did not learn), the paired t test (Welch's unpaired) otherwise. The "
        f"{len(verdicts)} p-values are adjusted together by Holm's method, which keeps the "
        "chance of any false `supported` among them at 5%: `supported` when the adjusted "
        "p-value is at most that, `contradicted` when the other direction's is, "
        "`inconclusive` otherwise, with the seeds per configuration that would find the "
        "difference observed 4 times in 5. No verdict from fewer than three runs a side "
        "(`inconclusive (n=2)`), from differences that are all the same (`inconclusive (no "
        "spread)`), or from a continuous metric whose diverged runs the rule does not score "
        f"(`diverged_value`).{looks}",
        "",
        *(line for verdict in verdicts for line in verdict_lines(verdict)),
    ]
