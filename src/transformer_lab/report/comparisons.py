"""Paired comparisons: along every swept key, each pair of its values A and B with every
other key equal, the difference A - B of each primary metric, its 95% interval and one
word. An exploratory table, each row at 5% on its own; the sweep's pre-registered claims
are judged together in :mod:`.verdicts`, and a row one of them judges says so.

Continuous metrics: the runs of A and B are paired by seed (the replicate key) where both
sides ran it, and by the other keys a comparison does not hold fixed (a hypothesis may
leave some free, :mod:`transformer_lab.sweep.hypotheses`); with fewer than two pairs the
comparison is unpaired (:mod:`.statistics`). A diverged run has no final value of the
metric: it is left out and counted in the row, unless the comparison says what it scores
(a hypothesis's ``diverged_value``). The word comes from the exact test (the sign-flip or
permutation test, :mod:`.exact`), two-sided; the interval beside it is Student t's
(Welch's unpaired), which assumes normal differences, a description of the spread.

Outcomes (``outcome/learned``, where the sweep's runs did not all end alike): the rates of
learned runs, every finished run counted and a diverged one as not learned, compared by
Newcombe's interval and Boschloo's exact test (:mod:`.proportions`).

The word is ``A better`` or ``B better`` when the exact test's two-sided p-value (twice
the smaller one-sided one) is at most 5% (better: a higher accuracy or rate, a lower
loss), ``no difference detected`` otherwise, with the seeds that would detect the
difference observed, or why this design cannot (3 pairs: the smallest two-sided p is
1/4), and ``inconclusive (n=1)`` when a configuration on either side has a single run.
"""

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from transformer_lab.report.progress import SEQUENCE_ACCURACY
from transformer_lab.report.proportions import RateDifference
from transformer_lab.report.statistics import (
    Difference,
    Power,
    paired_difference,
    unpaired_difference,
)
from transformer_lab.report.sweep import NOT_SET, Sweep, group_runs
from transformer_lab.report.table import EMPTY, markdown, metric_format
from transformer_lab.runs.order import natural_key
from transformer_lab.runs.outcome import LEARNED, is_learned
from transformer_lab.runs.reader import Run
from transformer_lab.sweep.hypotheses import same_value
from transformer_lab.training.metric_names import higher_is_better, metric_range

PRIMARY_METRICS = (LEARNED, "val/seq_acc", "val/seq_acc_auc", "val/loss")
LEVEL = 0.05  # each row on its own, two-sided
COMPARISONS = (
    "For each swept key and each pair of its values A and B, with every other key equal: "
    "the difference A − B and its 95% interval. Continuous metrics are paired by seed where "
    "both sides ran it, unpaired otherwise; the interval is Student t's over the per-seed "
    "differences (Welch's unpaired), which assumes normal differences; a diverged run has no "
    "final value and is left out, counted. "
    f"`{LEARNED}` compares the rates of runs that learned (every run counted, a diverged one "
    "as not learned): Newcombe's interval of the difference of rates. The word is an exact "
    "test's, two-sided at 5%: the sign-flip test of the per-seed differences (the "
    "permutation test of the runs unpaired), Boschloo's on the counts. `A better` or "
    "`B better` (better: a higher accuracy or rate, a lower loss), `no difference detected` "
    "otherwise, with the seeds per configuration at which a true difference of the size "
    "observed would be found with 80% power, or why these seeds cannot find any (3 pairs: "
    "no two-sided p below 1/4). Each row is at 5% on its own, an exploration: among 20 "
    "comparisons of settings that do not differ, about one reads `better` by chance. The "
    "claims an experiment stated before it ran are judged together, under one error rate, "
    "in *Hypotheses*; a row such a claim judges names its verdict."
)

Settings = list[tuple[str, str]]  # [(key, value), ...]


def metric_values(runs: list[Run], metric: str, diverged_value: float | None) -> list[float]:
    """The final ``metric`` of the ``runs`` that report it, a diverged run's as
    ``diverged_value`` (left out where that is None)."""
    values = []
    for run in runs:
        if run.diverged and diverged_value is not None:
            values.append(diverged_value)
        elif not run.diverged and metric in run.metrics:
            values.append(run.metrics[metric])
    return values


@dataclass(frozen=True)
class Comparison:
    """``metric`` of the finished runs ``a`` and ``b``; ``difference`` None when a
    configuration on either side has fewer than two runs (``fewest``) to judge by."""

    metric: str
    a: list[Run]
    b: list[Run]
    difference: Difference | RateDifference | None
    fewest: int
    diverged_value: float | None = None
    two_valued: bool = False  # runs of one configuration both learned and not: see LEARNED

    @property
    def left_out(self) -> tuple[int, int]:
        """The diverged runs of A and of B that have no value of a continuous metric."""
        if is_learned(self.metric) or self.diverged_value is not None:
            return 0, 0
        return sum(r.diverged for r in self.a), sum(r.diverged for r in self.b)

    @property
    def no_spread(self) -> bool:
        return isinstance(self.difference, Difference) and self.difference.no_spread

    @property
    def interval(self) -> tuple[float, float] | None:
        """The 95% interval of A - B; of a bounded metric (an accuracy), inside the
        differences it can take ([-1, 1]), as an interval of its mean stays in [0, 1]."""
        found = self.difference
        if found is None or self.no_spread:
            return None
        if isinstance(found, RateDifference):
            return found.interval
        low, high = metric_range(self.metric)
        if low is None or high is None:
            return found.low, found.high
        span = high - low
        return max(-span, found.low), min(span, found.high)

    @property
    def p_two_sided(self) -> float | None:
        """The exact test's two-sided p-value, twice the smaller one-sided one."""
        found = self.difference
        return None if found is None else min(1.0, 2 * min(found.p_greater, found.p_less))

    @property
    def better(self) -> str | None:
        """``"A better"`` or ``"B better"`` when the exact test finds a difference at 5%
        two-sided, else None."""
        p = self.p_two_sided
        if p is None or p > LEVEL:
            return None
        a_higher = self.difference.p_greater < self.difference.p_less
        return "A better" if a_higher == higher_is_better(self.metric) else "B better"

    @property
    def word(self) -> str:
        if self.difference is None:
            return f"inconclusive (n={self.fewest})"
        return self.better or "no difference detected"

    def out_of_reach(self, alpha: float) -> str | None:
        """Why no outcome of these runs could reach a one-sided p of ``alpha``: ``"3
        pairs: the smallest one-sided p is 0.125"``; None where one could."""
        found = self.difference
        if found.smallest_p <= alpha:
            return None
        return f"{found.sizes}: the smallest one-sided p is {found.smallest_p:.2g}"


def _has(run: Run, settings: Settings) -> bool:
    return all(same_value(value, run.overrides.get(key, NOT_SET)) for key, value in settings)


def fewest_runs(sweep: Sweep, sides: Sequence[list[Run]], count=len) -> int:
    """The fewest runs (``count`` of a configuration's runs) among the configurations on
    either side; 0 where a side has none."""
    counts = [
        count(runs) for side in sides for runs in group_runs(side, sweep.config_keys).values()
    ]
    return min(counts) if all(sides) else 0


def _fewest(sweep: Sweep, sides: list[list[Run]], metric: str, diverged_value) -> int:
    """The fewest runs with a value among the configurations on either side."""
    if is_learned(metric):
        return fewest_runs(sweep, sides)
    return fewest_runs(sweep, sides, lambda runs: len(metric_values(runs, metric, diverged_value)))


def _continuous(sweep, metric, key, sides, fixed, diverged_value) -> Difference:
    """Paired by seed and the free keys where two pairs or more exist, else unpaired; a run
    whose pair is not unique pairs with none."""
    free = [k for k in sweep.config_keys if k != key and k not in dict(fixed)]
    pair_keys = [*free, sweep.replicate_key]
    by_pair = []
    for side in sides:
        found: dict[tuple[str, ...], list[float]] = {}
        for run in side:
            pair = tuple(run.overrides.get(k, NOT_SET) for k in pair_keys)
            for value in metric_values([run], metric, diverged_value):
                found.setdefault(pair, []).append(value)
        by_pair.append({k: values[0] for k, values in found.items() if len(values) == 1})
    common = sorted(set(by_pair[0]) & set(by_pair[1]), key=lambda k: [natural_key(v) for v in k])
    if len(common) >= 2:
        return paired_difference([by_pair[0][k] for k in common], [by_pair[1][k] for k in common])
    return unpaired_difference(*(metric_values(side, metric, diverged_value) for side in sides))


def compare(
    sweep: Sweep,
    metric: str,
    key: str,
    values: tuple[str, str],
    fixed: Settings,
    diverged_value: float | None = None,
) -> Comparison:
    """A = ``key=values[0]``, B = ``key=values[1]``, both with the ``fixed`` settings."""
    sides = [[r for r in sweep.finished if _has(r, [(key, v), *fixed])] for v in values]
    fewest = _fewest(sweep, sides, metric, diverged_value)
    if fewest < 2:
        difference = None
    elif is_learned(metric):
        counts = [(sum(r.learned(metric) for r in side), len(side)) for side in sides]
        difference = RateDifference(*counts[0], *counts[1])
    else:
        difference = _continuous(sweep, metric, key, sides, fixed, diverged_value)
    two_valued = not is_learned(metric) and any(
        len({r.outcome == "learned" for r in runs}) > 1
        for side in sides
        for runs in group_runs(side, sweep.config_keys).values()
    )
    return Comparison(metric, *sides, difference, fewest, diverged_value, two_valued)


def difference_cell(comparison: Comparison) -> str:
    """``"+0.123 [+0.050, +0.196]"``; the estimate alone with no spread."""
    found, fmt = comparison.difference, metric_format(comparison.metric)
    if found is None:
        return EMPTY
    interval = comparison.interval
    if interval is None:
        return f"{found.estimate:+{fmt}} (no spread)"
    return f"{found.estimate:+{fmt}} [{interval[0]:+{fmt}}, {interval[1]:+{fmt}}]"


def pairing_cell(comparison: Comparison) -> str:
    """How the interval was made and of how many runs, and the diverged runs left out."""
    found = comparison.difference
    if isinstance(found, RateDifference):
        return f"learned {found.k_a}/{found.n_a} vs {found.k_b}/{found.n_b}"
    sizes = [len(side) for side in (comparison.a, comparison.b)]
    if found is None:
        cell = f"{sizes[0]} vs {sizes[1]} runs"
    elif found.paired:
        cell = f"paired, {found.n_a} seeds"
        with_value = [
            len(metric_values(side, comparison.metric, comparison.diverged_value))
            for side in (comparison.a, comparison.b)
        ]
        unpaired = sum(with_value) - 2 * found.n_a
        cell += f" ({unpaired} unpaired left out)" if unpaired else ""
    else:
        cell = f"unpaired, {found.n_a} vs {found.n_b} runs"
    if comparison.two_valued:
        cell += f"; runs both learned and not: two-valued, see {LEARNED}"
    left_out = comparison.left_out
    if any(left_out):
        cell += f"; diverged, left out: {left_out[0]}/{sizes[0]} vs {left_out[1]}/{sizes[1]}"
    elif comparison.diverged_value is not None:
        diverged = [sum(r.diverged for r in side) for side in (comparison.a, comparison.b)]
        if any(diverged):
            cell += (
                f"; diverged, scored {comparison.diverged_value:g}: {diverged[0]} vs {diverged[1]}"
            )
    return cell


def seeds_text(power: Power | None, power_of: str = "") -> str:
    """The seeds per configuration that would detect the difference observed."""
    return "no difference observed" if power is None else power.text(power_of)


def word_cell(comparison: Comparison) -> str:
    if comparison.better:
        return f"**{comparison.better}**"
    if comparison.difference is None:
        return comparison.word
    unreachable = comparison.out_of_reach(LEVEL / 2)
    if unreachable:
        return f"{comparison.word} ({unreachable}, above {LEVEL / 2:g})"
    seeds = comparison.difference.seeds_for_power(LEVEL, two_sided=True)
    if seeds is None:
        return f"{comparison.word} (the difference observed is 0)"
    return f"{comparison.word} ({seeds_text(seeds)})"


def _metrics(finished: list[Run], accuracy: str) -> list[str]:
    """The primary metrics the runs report, the report's progress ``accuracy`` first;
    outcomes where the runs did not all end alike."""
    primary = dict.fromkeys([accuracy, *PRIMARY_METRICS[1:]])
    metrics = [m for m in primary if any(m in r.metrics for r in finished)]
    outcomes = {r.outcome == "learned" for r in finished}
    return [LEARNED, *metrics] if len(outcomes) > 1 else metrics


def _judged_by(
    judged: Sequence, key: str, pair: tuple[str, str], fixed: Settings, metric: str
) -> list:
    """The verdicts (of ``judged``, :class:`~.verdicts.Verdict`) on the rules that compare
    this row: the same key, values, metric and held keys."""
    found = []
    for verdict in judged:
        h = verdict.hypothesis
        same_values = all(any(same_value(v, p) for p in pair) for v in h.values)
        held = dict(h.fixed)
        same_fixed = len(held) == len(fixed) and all(
            k in held and same_value(held[k], v) for k, v in fixed
        )
        if h.key == key and h.metric == metric and same_values and same_fixed:
            found.append(verdict)
    return found


@dataclass(frozen=True)
class Row:
    """One row of the comparisons: ``key`` at ``a`` against ``b`` with the other keys at
    ``fixed``, on ``metric``, and the verdicts of the rules that compare the same."""

    key: str
    fixed: Settings
    a: str
    b: str
    metric: str
    comparison: Comparison
    judged: list


def comparison_rows(
    sweep: Sweep, judged: Sequence = (), accuracy: str = SEQUENCE_ACCURACY
) -> list[Row]:
    """Per swept key, a row per pair of its values, per combination of the other keys and
    per primary metric the runs report (the report's progress ``accuracy`` among them,
    :mod:`.progress`), with the verdicts of the rules (of ``judged``) that compare the
    same."""
    finished = sweep.finished
    metrics = _metrics(finished, accuracy)
    rows = []
    for key in sweep.config_keys:
        rest = [k for k in sweep.config_keys if k != key]
        values = sorted({r.overrides.get(key, NOT_SET) for r in finished}, key=natural_key)
        for others in group_runs(finished, rest):
            fixed = list(zip(rest, others, strict=True))
            for a, b in itertools.combinations(values, 2):
                for metric in metrics:
                    found = compare(sweep, metric, key, (a, b), fixed)
                    if found.a and found.b:
                        verdicts = _judged_by(judged, key, (a, b), fixed, metric)
                        rows.append(Row(key, fixed, a, b, metric, found, verdicts))
    return rows


def comparison_tables(sweep: Sweep, found_rows: Sequence[Row]) -> list[tuple[str, str]]:
    """``[(key, markdown table)]`` of the ``found_rows`` (:func:`comparison_rows`), a table
    per swept key; a row a hypothesis judges names its verdict."""
    tables = []
    for key in sweep.config_keys:
        rest = [k for k in sweep.config_keys if k != key]
        rows = []
        for row in found_rows:
            if row.key != key:
                continue
            found = row.comparison
            word = word_cell(found) + "".join(
                f"; hypothesis `{v.hypothesis.id}`: {v.word}" for v in row.judged
            )
            cells = [difference_cell(found), pairing_cell(found), word]
            rows.append([*(v for _, v in row.fixed), row.a, row.b, row.metric, *cells])
        if rows:
            header = [*rest, "A", "B", "metric", "A − B [95% CI]", "interval of", "verdict"]
            tables.append((key, markdown(header, rows)))
    return tables


def comparisons_section(sweep: Sweep, rows: Sequence[Row]) -> list[str]:
    """The report's section, the ``rows`` (:func:`comparison_rows`) in a table per key;
    one line when every configuration ran once."""
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
    for key, table in comparison_tables(sweep, rows):
        lines += ["", f"### `{key}`", "", table]
    return lines
