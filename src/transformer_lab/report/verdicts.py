"""Hypotheses with verdicts: each rule the sweep's experiment stated before it ran
(:mod:`transformer_lab.sweep.hypotheses`), judged on the sweep's runs.

The hypotheses are read from each job's ``.hydra/config.yaml``, Hydra's copy of the config
the job ran with, rather than from the sweep's ``multirun.yaml``: a job's own config is
what its numbers came from, and a folder may gather the jobs of several multiruns (two
``hydra.sweep.dir=`` runs into one folder, as the README's tuned comparison does), where
``multirun.yaml`` holds the last one's config only. Jobs that state one id with two rules
are refused, as is a rule the sweep cannot evaluate, with the line the sweep's start gives.

A verdict is the comparison of the rule (:func:`.comparisons.compare`): ``supported`` when
the 95% interval of A - B excludes 0 in the predicted direction, ``contradicted`` when it
excludes 0 the other way, ``inconclusive`` when it does not, and ``inconclusive (n=1)``,
never a guess, when a configuration compared ran once.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from omegaconf import OmegaConf

from transformer_lab.report.comparisons import (
    Comparison,
    compare,
    difference_cell,
    pairing_cell,
    seeds_text,
    usable_runs,
)
from transformer_lab.report.sweep import Sweep
from transformer_lab.report.table import interval_cell, metric_format
from transformer_lab.sweep.hypotheses import (
    Hypothesis,
    check_against_sweep,
    check_reported,
    merged,
    parse_hypotheses,
)


def read_hypotheses(sweep: Sweep) -> list[Hypothesis]:
    """The hypotheses of the sweep's jobs, checked against the jobs that ran and the
    metrics the finished ones report (InvalidSetting naming the field that is wrong)."""
    given = [r.config_as_given for r in sweep.runs if r.config_as_given is not None]
    lists = [parse_hypotheses(OmegaConf.select(c, "hypotheses", default=None)) for c in given]
    hypotheses = merged(h for found in lists for h in found)
    if hypotheses:
        check_against_sweep(hypotheses, [r.overrides for r in sweep.runs], sweep.replicate_key)
        reported = {metric for run in sweep.finished for metric in run.metrics}
        check_reported(hypotheses, reported, "finished run")
    return hypotheses


@dataclass(frozen=True)
class Verdict:
    hypothesis: Hypothesis
    comparison: Comparison

    @property
    def word(self) -> str:
        found = self.comparison
        if found.difference is None:
            return found.word  # inconclusive (n=1)
        if found.better is None:
            return "inconclusive"
        return "supported" if found.better == self.hypothesis.predicted else "contradicted"


def judge(sweep: Sweep, hypothesis: Hypothesis) -> Verdict:
    h = hypothesis
    return Verdict(h, compare(sweep, h.metric, h.key, h.values, list(h.fixed)))


def verdict_lines(verdict: Verdict) -> list[str]:
    """A bullet: the verdict, the claim and its source, then the numbers behind it."""
    h, found = verdict.hypothesis, verdict.comparison
    fmt = metric_format(h.metric)
    sides = [
        f"{name} = {value}: "
        + interval_cell([r.metrics[h.metric] for r in usable_runs(runs, h.metric)], fmt)
        for name, value, runs in (("A", h.values[0], found.a), ("B", h.values[1], found.b))
    ]
    held = ", ".join(f"{k}={v}" for k, v in h.fixed)
    rule = f"`{h.metric}` by `{h.key}`" + (f" with {held}" if held else "")
    result = f"A − B {difference_cell(found)} ({pairing_cell(found)})"
    if found.difference is not None and found.better is None:
        result += f", {seeds_text(found.difference)}"
    return [
        f"- **{verdict.word}** `{h.id}`: {h.claim} ({h.source})",
        f"  {rule}: {'; '.join(sides)}; {result}; predicted: {h.predicted}.",
    ]


def hypotheses_section(verdicts: Sequence[Verdict]) -> list[str]:
    """The report's first section: a bullet per verdict (none without hypotheses)."""
    if not verdicts:
        return []
    lines = [
        "",
        "## Hypotheses",
        "",
        "What the experiment predicted before it ran, each judged by its rule as in *Paired "
        "comparisons*: `supported` when the 95% interval of A − B excludes 0 in the "
        "predicted direction, `contradicted` when it excludes 0 the other way, "
        "`inconclusive` when it does not, and `inconclusive (n=1)` when a configuration "
        "compared ran once.",
        "",
    ]
    return lines + [line for verdict in verdicts for line in verdict_lines(verdict)]
