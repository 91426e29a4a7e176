"""What a sweep's design can decide at all, known before its first job.

The report's tests are exact (:mod:`transformer_lab.report.exact`, Boschloo's on counts),
and an exact test cannot give a p-value below one over its arrangements: n pairs of seeds
no one-sided p below 1/2^n (the sign-flip test), n runs a side unpaired none below
1/C(2n, n), and counts of n runs a side none below 4^-n (Boschloo's, at n/n against 0/n).
Holm's method over a family of k rules, as the report judges them (a rule ``across`` keys is
one rule per cell), asks the smallest of their 2k one-sided p-values to be at most
level / 2k (a sequential sweep's: level / looks / 2k). An equivalence is contradicted by
the test of a difference beyond its margin, whose p is the smaller one-sided p doubled, so
its seeds must reach half that. A design whose seeds cannot give that judges nothing
whatever its runs do, or can support an equivalence but never contradict it, so the sweep
says so when it starts, one line per rule, with the seeds that could; it still runs (a
pilot may mean to), and the report reads ``inconclusive (too few seeds)``.
"""

import math
from collections import Counter
from collections.abc import Sequence

from transformer_lab.runs.outcome import LEARNED, is_learned
from transformer_lab.sweep.hypotheses import EQUIVALENT, Hypothesis, expand_across

RESAMPLES = 9999  # the exact tests enumerate up to this many arrangements, sample beyond
BEYOND_SIDES = 2  # a difference beyond the margin, either side: its p doubled (Bonferroni)


def smallest_p(n_a: int, n_b: int, paired: bool) -> float:
    """The smallest one-sided p-value of a permutation test of ``n_a`` and ``n_b`` runs
    (pairs: both the number of pairs): one over its arrangements, or over a Monte Carlo
    test's :data:`RESAMPLES` + 1 where they are more."""
    arrangements = 2**n_a if paired else math.comb(n_a + n_b, n_a)
    return 1 / arrangements if arrangements <= RESAMPLES else 1 / (RESAMPLES + 1)


def smallest_p_of(metric: str, n: int) -> float:
    """The smallest one-sided p-value a rule on ``metric`` can get from ``n`` seeds per
    configuration: Boschloo's 4^-n on counts, the sign-flip test's otherwise."""
    return 4.0**-n if is_learned(metric) else smallest_p(n, n, paired=True)


def seeds_to_reach(alpha: float, paired: bool) -> int | None:
    """The fewest seeds per configuration whose permutation test can give a one-sided
    p-value at most ``alpha`` (6 pairs for 0.025); None where no number can (below a Monte
    Carlo test's 1 / (RESAMPLES + 1))."""
    if alpha < 1 / (RESAMPLES + 1):
        return None
    n = 1
    while smallest_p(n, n, paired) > alpha:
        n += 1
    return n


def seeds_for(metric: str, alpha: float) -> int | None:
    """:func:`seeds_to_reach` of a rule on ``metric`` (counts: 4^-n)."""
    if metric != LEARNED:
        return seeds_to_reach(alpha, paired=True)
    n = 1
    while 4.0**-n > alpha:
        n += 1
    return n


def out_of_reach(
    hypotheses: Sequence[Hypothesis],
    jobs: list[dict[str, str]],
    level: float,
    looks: int = 1,
    replicate_key: str = "seed",
    seeds: int | None = None,
) -> list[str]:
    """A line per rule that no outcome of the ``jobs`` (their overrides) could decide, or
    could support but never contradict (an equivalence): the fewest seeds among the
    configurations it compares (or ``seeds``, a sequential sweep's budget), what the first
    step of Holm's method over its family asks, and the seeds that could give it. A rule
    ``across`` keys is judged per cell; its cells share one line."""
    rules = expand_across(list(hypotheses), jobs)
    family_size = Counter(h.family for h in rules)
    lines: dict[tuple[str, str], list[Hypothesis]] = {}
    for h in rules:
        counts = Counter(
            tuple(sorted((k, v) for k, v in job.items() if k != replicate_key))
            for job in jobs
            if any(h.runs(job, value) for value in h.values)
        )
        fewest = min(counts.values(), default=0) if seeds is None else seeds
        size = family_size[h.family]
        step = level / looks / (2 * size)
        sides = BEYOND_SIDES if h.predicted == EQUIVALENT else 1
        smallest = smallest_p_of(h.metric, fewest)
        if fewest == 0 or sides * smallest <= step:
            continue
        holm = f"Holm's first step over the {2 * size} tests of {size} rules asks {step:.2g}"
        if smallest <= step:  # an equivalence: supported within the margin, never beyond it
            body = (
                f"{fewest} seeds per configuration can support it but never contradict it: a "
                f"difference beyond its margin has no p below {sides * smallest:.2g} (the "
                f"smaller one-sided p doubled), and {holm}"
            )
        else:
            body = (
                f"{fewest} seeds per configuration cannot decide it: no one-sided p below "
                f"{smallest:.2g} from them, and {holm}"
            )
        needed = seeds_for(h.metric, step / sides)
        lines.setdefault((h.base or h.id, f"{body}; {needed} seeds could"), []).append(h)
    cells_of = Counter(h.base for h in rules if h.base)
    return [f"{_where(rules_of, cells_of)}: {body}" for (_, body), rules_of in lines.items()]


def _where(rules: list[Hypothesis], cells_of: Counter) -> str:
    """The setting a line names: the rule, and in how many of its cells for a rule across
    keys (one line for them all, not one per cell)."""
    first = rules[0]
    if first.base is None:
        return first.field("metric")
    total = cells_of[first.base]
    cells = f"all {total} cells" if len(rules) == total else f"{len(rules)} of its {total} cells"
    return f"hypotheses.{first.base}.metric ({cells})"
