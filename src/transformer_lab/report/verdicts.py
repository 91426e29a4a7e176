"""Hypotheses with verdicts: each rule the sweep's experiment stated before it ran
(:mod:`transformer_lab.sweep.hypotheses`), judged on the sweep's runs, all of one sweep
under one error rate.

The hypotheses are read from each job's ``.hydra/config.yaml``, Hydra's copy of the config
the job ran with, rather than from the sweep's ``multirun.yaml``: a job's own config is
what its numbers came from, and a folder may gather the jobs of several multiruns (two
``hydra.sweep.dir=`` runs into one folder, as docs/sweeps.md's tuned comparison does), where
``multirun.yaml`` holds the last one's config only. Jobs that state one id with two rules
are refused, as is a rule the sweep cannot evaluate, with the line the sweep's start gives.

Each rule is two one-sided tests, one for ``supported`` and one for ``contradicted``:
the predicted direction and the other one (Boschloo's exact test on the counts for
``outcome/learned``, the exact sign-flip or permutation test otherwise, :mod:`.exact`),
or, for ``equivalent``, the two one-sided tests against the margin (TOST: both bounds
excluded) and the test that the difference lies beyond it. All 2k p-values of a sweep's k
rules form one family, adjusted by Holm's method (:mod:`.family`), so the chance of any
false verdict, ``supported`` or ``contradicted``, is at most the level (5%), whatever the
true differences. ``supported`` when the adjusted p-value of the first is at most the
level, ``contradicted`` when that of the second is, ``inconclusive`` otherwise, with the
seeds per configuration that 80% power would need, or ``inconclusive (too few seeds)``
where no outcome of these runs could reach Holm's first step (3 pairs: no one-sided p
below 1/8; for an equivalence whose runs lie beyond its margin, twice that). A rule
with no test to make is ``inconclusive`` with the reason, and still counts in the family:
fewer than three runs on a side (``n=2``), or diverged runs on a continuous metric whose
rule does not say what they score.

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
    fewest_runs,
    metric_values,
    pairing_cell,
    seeds_text,
)
from transformer_lab.report.family import holm
from transformer_lab.report.proportions import RateDifference
from transformer_lab.report.statistics import MIN_RUNS, Difference, Power
from transformer_lab.report.sweep import Sweep
from transformer_lab.report.table import interval_cell, learned_cell, metric_format
from transformer_lab.runs.outcome import LEARNED, budget_of, is_learned
from transformer_lab.sweep.design import BEYOND_SIDES
from transformer_lab.sweep.hypotheses import (
    EQUIVALENT,
    Hypothesis,
    check_against_sweep,
    check_reported,
    expand_across,
    merged,
    parse_hypotheses,
)
from transformer_lab.sweep.sequential import FILE, LEVEL, SequentialDesign
from transformer_lab.training.metric_names import higher_is_better, metric_range


def read_hypotheses(sweep: Sweep) -> list[Hypothesis]:
    """The hypotheses of the sweep's jobs, checked against the jobs that ran and the
    metrics the finished ones report (InvalidSetting naming the field that is wrong)."""
    configs = (r.settings("hypotheses", given=True) for r in sweep.runs)
    given = [config for config in configs if config is not None]
    lists = [parse_hypotheses(OmegaConf.select(c, "hypotheses", default=None)) for c in given]
    hypotheses = merged(h for found in lists for h in found)
    hypotheses = expand_across(hypotheses, [r.overrides for r in sweep.runs])
    if hypotheses:
        check_against_sweep(hypotheses, [r.overrides for r in sweep.runs], sweep.replicate_key)
        reported = {metric for run in sweep.finished for metric in run.metrics} | {LEARNED}
        reported |= {m for h in hypotheses if is_learned(m := h.metric) and _recorded(sweep, m)}
        check_reported(hypotheses, reported, "finished run")
    return hypotheses


def _recorded(sweep: Sweep, metric: str) -> bool:
    """Whether the sweep's finished runs recorded the outcome at ``metric``'s budget."""
    budget = budget_of(metric)
    return any(run.outcome_at(budget) is not None for run in sweep.finished)


def untested(comparison: Comparison) -> str | None:
    """Why a rule's comparison cannot be tested (``"n=2"``, ``"2 diverged runs left
    out"``), or None when it can."""
    if comparison.difference is None or comparison.fewest < MIN_RUNS:
        return f"n={comparison.fewest}"
    left_out = sum(comparison.left_out)
    if left_out:
        return f"{left_out} diverged run{'s' * (left_out > 1)} without a value; set diverged_value"
    return None


def equivalence_p(found: Difference, margin: float) -> tuple[float, float]:
    """``(p_equivalent, p_beyond)`` of A - B against ``margin``: TOST, the larger p of the
    tests that it is above -margin and below +margin; and the test that it lies beyond the
    margin on either side, the smaller of those two p-values doubled (Bonferroni)."""
    above_lower, below_upper = found.shifted(-margin), found.shifted(margin)
    p_equivalent = max(above_lower.p_greater, below_upper.p_less)
    p_beyond = min(1.0, BEYOND_SIDES * min(above_lower.p_less, below_upper.p_greater))
    return p_equivalent, p_beyond


def rule_p(comparison: Comparison, hypothesis: Hypothesis) -> tuple[float, float]:
    """The one-sided p-values for ``supported`` and for ``contradicted``: the predicted
    direction and the other one, or equivalence and a difference beyond the margin (1
    and 1 for a comparison with no test)."""
    if untested(comparison):
        return 1.0, 1.0
    found = comparison.difference
    if hypothesis.predicted == EQUIVALENT:
        return equivalence_p(found, hypothesis.margin)
    a_better = (found.p_greater, found.p_less)
    if not higher_is_better(comparison.metric):
        a_better = a_better[::-1]
    return a_better if hypothesis.predicted == "A better" else a_better[::-1]


@dataclass(frozen=True)
class Verdict:
    hypothesis: Hypothesis
    comparison: Comparison
    p: float  # one-sided: the predicted direction, or TOST
    p_other: float  # one-sided: the other direction, or beyond the margin
    adjusted: float  # Holm over the family: both p-values of every rule of the sweep
    adjusted_other: float
    level: float  # the family-wise level of the look that judged it
    family: int  # p-values adjusted together: twice the rules
    look: int | None = None  # seeds per configuration of a sequential sweep's look
    looks: int = 1  # a sequential sweep's looks, between which the level is split
    unfinished: str | None = None  # the first look, its stage not yet run: what it has so far

    @property
    def first_step(self) -> float:
        """What Holm's method asks of the smallest p-value of the family."""
        return self.level / self.family

    @property
    def out_of_reach(self) -> str | None:
        """Why no outcome of these runs could decide the rule the way they point, or None.

        An equivalence whose runs lie beyond its margin can be decided only by the test of a
        difference beyond it, whose p is the smaller one-sided p doubled (either side): its
        smallest value is twice the runs' smallest p, so 8 pairs, enough to find a difference
        within the margin at Holm's 0.025 / 4, can never find one beyond it."""
        if untested(self.comparison):
            return None
        reason = self.comparison.out_of_reach(self.one_sided_step)
        if reason and self.beyond_margin:
            found = self.comparison.difference
            smallest_beyond = min(1.0, BEYOND_SIDES * found.smallest_p)
            return (
                f"{found.sizes}, beyond the margin: the smallest p of a difference beyond it "
                f"is {smallest_beyond:.2g}"
            )
        return reason

    @property
    def one_sided_step(self) -> float:
        """The one-sided p the runs' test must reach for Holm's first step: the step itself,
        or its share for an equivalence beyond its margin, whose test multiplies p."""
        return self.first_step / BEYOND_SIDES if self.beyond_margin else self.first_step

    @property
    def beyond_margin(self) -> bool:
        """Whether an equivalence's runs lie beyond its margin."""
        h = self.hypothesis
        return h.predicted == EQUIVALENT and abs(self.comparison.difference.estimate) > h.margin

    @property
    def word(self) -> str:
        if self.unfinished:
            return f"inconclusive (look after {self.look} seeds unfinished: {self.unfinished})"
        reason = untested(self.comparison)
        if reason:
            return f"inconclusive ({reason})"
        if self.adjusted <= self.level:
            return "supported"
        if self.adjusted_other <= self.level:
            return "contradicted"
        if self.out_of_reach:
            return "inconclusive (too few seeds)"
        return "inconclusive"

    @property
    def decided(self) -> bool:
        return self.word in ("supported", "contradicted")

    @property
    def design_p(self) -> tuple[float, float]:
        """The two p-values as valid for the whole design: a sequential sweep's, at the
        look that judged it, times its looks (the union bound over the looks, the split
        of the level turned round), for a family across sweeps (:mod:`.lab`)."""
        return min(1.0, self.looks * self.p), min(1.0, self.looks * self.p_other)

    def seeds_for_power(self) -> Power | None:
        """Seeds per configuration for 80% power against the difference observed, at the
        level Holm's first step asks of the family (one-sided)."""
        found = self.comparison.difference
        if self.hypothesis.predicted == EQUIVALENT:
            return found.seeds_for_equivalence(self.hypothesis.margin, self.first_step)
        return found.seeds_for_power(self.first_step)


def judge_all(
    sweep: Sweep, hypotheses: Sequence[Hypothesis], level: float = LEVEL, looks: int = 1
) -> list[Verdict]:
    """Every hypothesis's verdict, both p-values of every rule of one family (the sweep's
    unless rules name their own ``family``) adjusted together."""
    comparisons = [
        compare(sweep, h.metric, h.key, h.values, list(h.fixed), h.diverged_value)
        for h in hypotheses
    ]
    p_values = [rule_p(c, h) for h, c in zip(hypotheses, comparisons, strict=True)]
    families: dict[str | None, list[int]] = {}
    for i, h in enumerate(hypotheses):
        families.setdefault(h.family, []).append(i)
    adjusted: dict[int, tuple[float, float]] = {}
    for members in families.values():
        k = len(members)
        found = holm([p_values[i][0] for i in members] + [p_values[i][1] for i in members])
        adjusted |= {i: (found[j], found[k + j]) for j, i in enumerate(members)}
    return [
        Verdict(h, c, p, q, *adjusted[i], level, 2 * len(families[h.family]), looks=looks)
        for i, (h, c, (p, q)) in enumerate(zip(hypotheses, comparisons, p_values, strict=True))
    ]


class SequentialRecordDamaged(ValueError):
    """``sequential.json`` does not parse: no verdict can be given without its design."""


def sequential_design(sweep: Sweep) -> tuple[SequentialDesign, list[str]] | None:
    """The design of a sequential sweep and its seeds in order, from ``sequential.json``."""
    path = sweep.path / FILE
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text())
        design = SequentialDesign(
            record["first"], record["budget"], record["level"], record["first_seed"]
        )
    except (ValueError, KeyError, TypeError) as error:  # ConfigError too: a value out of range
        raise SequentialRecordDamaged(
            f"{path} is damaged ({type(error).__name__}): the sweep's looks and their levels "
            "are unknown; allowed: the file the sweeper wrote (the same command writes it "
            "again when it continues the sweep)"
        ) from error
    return design, [str(seed) for seed in design.seeds]


def first_seeds(sweep: Sweep, seeds: list[str], n: int) -> Sweep:
    """The sweep as it stood at the look after ``n`` seeds per configuration."""
    kept = set(seeds[:n])
    runs = [r for r in sweep.runs if r.overrides.get(sweep.replicate_key) in kept]
    return Sweep(sweep.path, runs, sweep.replicate_key)


def judge_looks(
    sweep: Sweep, hypotheses: Sequence[Hypothesis], design: SequentialDesign, seeds: list[str]
) -> list[Verdict]:
    """Each hypothesis judged at every look the sweep has completed, at the level per look:
    the first look that decides it, or the last one completed.

    A look is complete once every configuration that a rule still undecided compares has
    finished each of the look's seeds. A stage run in part (its jobs running, stopped,
    failed, or kept as they end) is not looked at: verdicts on part of a stage would be
    looks the level was not split for. Until the first look completes, its verdicts so far
    are given, marked ``unfinished``, and decide nothing."""
    verdicts: dict[str, Verdict] = {}
    for n in design.stages:
        judged = judge_all(
            first_seeds(sweep, seeds, n), hypotheses, design.level_per_look, len(design.stages)
        )
        decided = {name for name, verdict in verdicts.items() if verdict.decided}
        pending = [v for v in judged if v.hypothesis.id not in decided]
        # finished runs, diverged ones too, of the fewest-run configuration a rule compares
        have = min(
            (fewest_runs(sweep, [v.comparison.a, v.comparison.b]) for v in pending), default=n
        )
        if have < n:
            if not verdicts:
                unfinished = f"a configuration has {have} of its {n} seeds"
                verdicts = {
                    v.hypothesis.id: replace(v, look=n, unfinished=unfinished) for v in judged
                }
            break
        verdicts |= {v.hypothesis.id: replace(v, look=n) for v in pending}
    return [verdicts[h.id] for h in hypotheses]


def judge_sweep(
    sweep: Sweep,
    hypotheses: Sequence[Hypothesis],
    sequential: tuple[SequentialDesign, list[str]] | None = None,
) -> list[Verdict]:
    """The sweep's verdicts: at the looks of its ``sequential`` design
    (:func:`sequential_design`) if it has one, else at once."""
    if not hypotheses:
        return []
    if sequential is None:
        return judge_all(sweep, hypotheses)
    return judge_looks(sweep, hypotheses, *sequential)


def _side_cell(runs, h: Hypothesis) -> str:
    if is_learned(h.metric):
        return learned_cell(runs, h.metric) if runs else "no runs"
    values = metric_values(runs, h.metric, h.diverged_value)
    return interval_cell(values, metric_format(h.metric), metric_range(h.metric))


def _test_text(verdict: Verdict) -> str:
    """Which test judged the rule, with its p-values raw and adjusted."""
    h, found = verdict.hypothesis, verdict.comparison.difference
    test = "Boschloo's exact test" if isinstance(found, RateDifference) else found.test.text
    if h.predicted == EQUIVALENT:
        test = f"TOST within ±{h.margin:g} by two one-sided {test.replace(' test', ' tests', 1)}"
        raw = f"p = {verdict.p:.2g} (beyond the margin {verdict.p_other:.2g})"
    else:
        raw = f"one-sided p = {verdict.p:.2g} (other direction {verdict.p_other:.2g})"
    return (
        f"{test}: {raw}, Holm-adjusted {verdict.adjusted:.2g} ({verdict.adjusted_other:.2g}) "
        f"of {verdict.family} tests against {verdict.level:.3g}"
    )


def _undecided_text(verdict: Verdict) -> str:
    """What it would take: the seeds for 80% power, or why these seeds could not decide."""
    unreachable = verdict.out_of_reach
    found = verdict.comparison.difference
    if unreachable:
        step = verdict.first_step
        n = found.seeds_to_reach(verdict.one_sided_step)
        more = f"; {n} seeds could" if n else ""
        return (
            f"no outcome of these runs could decide it ({unreachable}, Holm's first step "
            f"asks {step:.2g}){more}"
        )
    seeds = verdict.seeds_for_power()
    if seeds is None and verdict.hypothesis.predicted == EQUIVALENT:
        return "the difference observed is at or beyond the margin: no seeds would show it within"
    return seeds_text(seeds, " at this level")


def verdict_lines(verdict: Verdict, exploratory: bool = False) -> list[str]:
    """A bullet: the verdict, the claim and its source, then the numbers behind it."""
    h, found = verdict.hypothesis, verdict.comparison
    sides = [
        f"{name} = {value}: {_side_cell(runs, h)}"
        for name, value, runs in (("A", h.values[0], found.a), ("B", h.values[1], found.b))
    ]
    held = ", ".join(f"{k}={v}" for k, v in h.fixed)
    rule = f"`{h.metric}` by `{h.key}`" + (f" with {held}" if held else "")
    result = f"A − B {difference_cell(found)} ({pairing_cell(found)})"
    if not untested(found):
        result += f"; {_test_text(verdict)}"
        if not verdict.decided:
            result += f"; {_undecided_text(verdict)}"
    look = f" after {verdict.look} seeds" if verdict.look else ""
    predicted = f"{EQUIVALENT} within ±{h.margin:g}" if h.predicted == EQUIVALENT else h.predicted
    word = f"**{verdict.word}**" + (" (exploratory)" if exploratory else "")
    return [
        f"- {word}{look} `{h.id}`: {h.claim} ({h.source})",
        f"  {rule}: {'; '.join(sides)}; {result}; predicted: {predicted}.",
    ]


VERDICTS = (
    "What the experiment predicted before it ran. Each rule is two one-sided tests, one "
    "for `supported` and one for `contradicted`: the direction predicted and the other one, "
    "or, for `equivalent`, the two one-sided tests that the difference lies within the "
    "margin (TOST) and the test that it lies beyond. The tests are exact, because a sweep "
    "has few seeds and its runs often either learn or stall, so that no p-value may rest on "
    "normal values: Boschloo's on the counts of runs that learned for `outcome/learned` (a "
    "diverged run did not learn); on a continuous metric the sign-flip test of the "
    "per-seed differences (the permutation test of the runs' labels where the seeds "
    "differ), every assignment enumerated up to 9,999 of them, a seeded Monte Carlo "
    "sample beyond. Both p-values of every rule are adjusted together by Holm's method, "
    "which keeps the chance of any false verdict among them, `supported` or "
    "`contradicted`, at 5%: `supported` when the first adjusted p-value is at most that, "
    "`contradicted` when the second is, `inconclusive` otherwise, with the seeds per "
    "configuration that would find the difference observed 4 times in 5 (the noncentral "
    "t's power, an approximation of the exact test's). An exact test cannot go below one "
    "over its arrangements (3 pairs: a one-sided p of 1/8), so where no outcome of the runs "
    "could pass Holm's first step the rule is `inconclusive (too few seeds)` and says how "
    "many would do. No verdict from fewer than three runs a side (`inconclusive (n=2)`), "
    "or from a continuous metric whose diverged runs the rule does not score "
    "(`diverged_value`). The intervals are descriptive: Student t's, Newcombe's for rates."
)


def hypotheses_section(
    verdicts: Sequence[Verdict], changed_rule: str | None = None, unchecked: str | None = None
) -> list[str]:
    """The report's first section: a bullet per verdict (none without hypotheses); every
    verdict exploratory where the rule changed after the runs (``changed_rule`` says how),
    and why that could not be checked (``unchecked``)."""
    if not verdicts:
        return []
    first = verdicts[0]
    looks = (
        f" This sweep added seeds in stages and looked after each (seeds per configuration at "
        f"the looks: see each verdict); each look is at {first.level:.3g}, the level split "
        f"between its {first.looks} looks, so that the chance of any false verdict over all "
        "of them stays at 5%."
        if first.look
        else ""
    )
    warning = (
        ["", f"**Rule changed after the runs: judged as exploratory.** {changed_rule}"]
        if changed_rule
        else []
    )
    return [
        "",
        "## Hypotheses",
        *warning,
        "",
        f"{VERDICTS}{looks}" + (f" {unchecked}" if unchecked else ""),
        "",
        *(
            line
            for verdict in verdicts
            if verdict.hypothesis.base is None
            for line in verdict_lines(verdict, bool(changed_rule))
        ),
        *_across_lines(verdicts),
    ]


def _across_lines(verdicts: Sequence[Verdict]) -> list[str]:
    """One bullet per rule judged across cells: how many cells decided which way; the cells
    themselves are in *Where each claim holds* (:mod:`.regions`)."""
    claims: dict[str, list[Verdict]] = {}
    for verdict in verdicts:
        if verdict.hypothesis.base is not None:
            claims.setdefault(verdict.hypothesis.base, []).append(verdict)
    lines = []
    for base, cells in claims.items():
        words = [v.word.split(" ")[0] for v in cells]
        counts = ", ".join(f"{words.count(w)} {w}" for w in ("supported", "contradicted"))
        lines.append(
            f"- **across {', '.join(f'`{k}`' for k, _ in cells[0].hypothesis.cell)}** "
            f"`{base}`: {cells[0].hypothesis.claim} ({cells[0].hypothesis.source}) "
            f"{len(cells)} cells: {counts}, {words.count('inconclusive')} inconclusive "
            "(*Where each claim holds*)."
        )
    return lines
