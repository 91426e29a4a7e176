"""Paired comparisons: along every swept key, each pair of its values A and B with every
other key equal, the difference A - B of each primary metric, its 95% interval and one
word.

The runs of A and B are paired by seed (the replicate key) where both sides ran it, and
by the other keys a comparison does not hold fixed (a hypothesis may leave some free,
:mod:`transformer_lab.sweep.hypotheses`); with fewer than two pairs the interval is
Welch's, unpaired (:mod:`.statistics`). The word is ``A better`` or ``B better`` when the
interval excludes 0 (better: a higher accuracy, a lower loss), ``no difference detected``
when it does not, and ``inconclusive (n=1)`` when a configuration on either side has a
single run left: one run has no spread to judge a difference by. Diverged runs are left
out, as in the tables, and counted in the row.
"""

import itertools
from dataclasses import dataclass

from transformer_lab.report.statistics import (
    MAX_SEEDS,
    Difference,
    paired_difference,
    welch_difference,
)
from transformer_lab.report.sweep import NOT_SET, Sweep, group_runs
from transformer_lab.report.table import EMPTY, markdown, metric_format
from transformer_lab.runs.order import natural_key
from transformer_lab.runs.reader import Run
from transformer_lab.sweep.hypotheses import same_value
from transformer_lab.training.metric_names import higher_is_better

PRIMARY_METRICS = ("val/seq_acc", "val/seq_acc_auc", "val/loss")
COMPARISONS = (
    "For each swept key and each pair of its values A and B, with every other key equal: "
    "the difference A − B and its 95% interval, paired by seed where both sides ran it "
    "(Student t over the per-seed differences), Welch's unpaired interval otherwise. "
    "`A better` or `B better` when the interval excludes 0 (better: a higher accuracy, a "
    "lower loss), `no difference detected` when it does not, with roughly how many seeds per "
    "configuration would detect a difference of the size observed: the smallest n at which "
    "the interval's half-width, for the spread observed, falls below the observed difference "
    "(at that n such a true difference is found about half the time; to find it reliably, "
    "take about twice as many). Diverged runs are left out and counted. Each interval is at "
    "95% on its own: among 20 comparisons of settings that do not differ, about one reads "
    "`better` by chance."
)

Settings = list[tuple[str, str]]  # [(key, value), ...]


@dataclass(frozen=True)
class Comparison:
    """``metric`` of the finished runs ``a`` and ``b``; ``difference`` None when a
    configuration on either side has fewer than two runs (``fewest``) to judge by."""

    metric: str
    a: list[Run]
    b: list[Run]
    difference: Difference | None
    fewest: int

    @property
    def better(self) -> str | None:
        """``"A better"`` or ``"B better"`` when the interval excludes 0, else None."""
        if self.difference is None or not self.difference.excludes_zero:
            return None
        a_higher = self.difference.low > 0
        return "A better" if a_higher == higher_is_better(self.metric) else "B better"

    @property
    def word(self) -> str:
        if self.difference is None:
            return f"inconclusive (n={self.fewest})"
        return self.better or "no difference detected"


def _has(run: Run, settings: Settings) -> bool:
    return all(same_value(value, run.overrides.get(key, NOT_SET)) for key, value in settings)


def usable_runs(runs: list[Run], metric: str) -> list[Run]:
    """The runs that count for ``metric``: those that report it and did not diverge."""
    return [r for r in runs if not r.diverged and metric in r.metrics]


def compare(
    sweep: Sweep, metric: str, key: str, values: tuple[str, str], fixed: Settings
) -> Comparison:
    """A = ``key=values[0]``, B = ``key=values[1]``, both with the ``fixed`` settings; a
    run of A pairs with the run of B that has its seed and its values of the free keys
    (a run whose pair is not unique pairs with none)."""
    a, b = ([r for r in sweep.finished if _has(r, [(key, v), *fixed])] for v in values)
    free = [k for k in sweep.config_keys if k != key and k not in dict(fixed)]
    pair_keys = [*free, sweep.replicate_key]
    per_configuration = [
        len(usable_runs(runs, metric))
        for side in (a, b)
        for runs in group_runs(side, sweep.config_keys).values()
    ]
    fewest = min(per_configuration) if a and b else 0
    if fewest < 2:
        return Comparison(metric, a, b, None, fewest)
    sides = []
    for side in (a, b):
        by_pair: dict[tuple[str, ...], list[Run]] = {}
        for run in usable_runs(side, metric):
            pair = tuple(run.overrides.get(k, NOT_SET) for k in pair_keys)
            by_pair.setdefault(pair, []).append(run)
        sides.append({k: runs[0] for k, runs in by_pair.items() if len(runs) == 1})
    common = sorted(set(sides[0]) & set(sides[1]), key=lambda k: [natural_key(v) for v in k])
    if len(common) >= 2:
        difference = paired_difference(
            [sides[0][k].metrics[metric] for k in common],
            [sides[1][k].metrics[metric] for k in common],
        )
    else:
        difference = welch_difference(
            [r.metrics[metric] for r in usable_runs(a, metric)],
            [r.metrics[metric] for r in usable_runs(b, metric)],
        )
    return Comparison(metric, a, b, difference, fewest)


def difference_cell(comparison: Comparison) -> str:
    """``"+0.123 [+0.050, +0.196]"``."""
    found, fmt = comparison.difference, metric_format(comparison.metric)
    if found is None:
        return EMPTY
    return f"{found.estimate:+{fmt}} [{found.low:+{fmt}}, {found.high:+{fmt}}]"


def pairing_cell(comparison: Comparison) -> str:
    """How the interval was made and of how many runs, and the diverged runs left out."""
    found = comparison.difference
    usable = [len(usable_runs(side, comparison.metric)) for side in (comparison.a, comparison.b)]
    if found is None:
        cell = f"{usable[0]} vs {usable[1]} runs"
    elif found.paired:
        cell = f"paired, {found.n_a} seeds"
        unpaired = sum(usable) - 2 * found.n_a
        cell += f" ({unpaired} unpaired left out)" if unpaired else ""
    else:
        cell = f"Welch, {found.n_a} vs {found.n_b} runs"
    diverged = [sum(r.diverged for r in side) for side in (comparison.a, comparison.b)]
    if any(diverged):
        sizes = [len(side) for side in (comparison.a, comparison.b)]
        cell += f"; diverged {diverged[0]}/{sizes[0]} vs {diverged[1]}/{sizes[1]}"
    return cell


def seeds_text(difference: Difference) -> str:
    """Roughly the seeds per configuration that would detect the difference observed."""
    if difference.seeds_to_detect is None:
        return "no difference observed"
    if difference.seeds_to_detect > MAX_SEEDS:
        return f"> {MAX_SEEDS} seeds would detect one this size"
    return f"≈ {difference.seeds_to_detect} seeds would detect one this size"


def word_cell(comparison: Comparison) -> str:
    if comparison.better:
        return f"**{comparison.better}**"
    if comparison.difference is not None:
        return f"{comparison.word} ({seeds_text(comparison.difference)})"
    return comparison.word


def comparison_tables(sweep: Sweep) -> list[tuple[str, str]]:
    """``[(key, markdown table)]``: per swept key, a row per pair of its values, per
    combination of the other keys and per primary metric the runs report."""
    finished = sweep.finished
    metrics = [m for m in PRIMARY_METRICS if any(m in r.metrics for r in finished)]
    tables = []
    for key in sweep.config_keys:
        rest = [k for k in sweep.config_keys if k != key]
        values = sorted({r.overrides.get(key, NOT_SET) for r in finished}, key=natural_key)
        rows = []
        for others in group_runs(finished, rest):
            fixed = list(zip(rest, others, strict=True))
            for a, b in itertools.combinations(values, 2):
                for metric in metrics:
                    found = compare(sweep, metric, key, (a, b), fixed)
                    if not (found.a and found.b):
                        continue
                    cells = [difference_cell(found), pairing_cell(found), word_cell(found)]
                    rows.append([*others, a, b, metric, *cells])
        if rows:
            header = [*rest, "A", "B", "metric", "A − B [95% CI]", "interval of", "verdict"]
            tables.append((key, markdown(header, rows)))
    return tables


def comparisons_section(sweep: Sweep) -> list[str]:
    """The report's section, its tables under a heading per key; one line when every
    configuration ran once."""
    if not sweep.config_keys:
        return []
    lines = ["", "## Paired comparisons", ""]
    jobs = group_runs(sweep.finished, sweep.config_keys).values()
    if max(len(runs) for runs in jobs) < 2:
        lines.append(
            f"Every configuration ran once: no difference has a spread to be judged by "
            f"(n=1). Run each with several `{sweep.replicate_key}` values "
            f"(`{sweep.replicate_key}=0,1,2`) to compare them."
        )
        return lines
    lines.append(COMPARISONS)
    for key, table in comparison_tables(sweep):
        lines += ["", f"### `{key}`", "", table]
    return lines
