"""What a sweep's design can decide at all, known before its first job.

The report's tests are exact (:mod:`transformer_lab.report.exact`, Boschloo's on counts),
and an exact test cannot give a p-value below one over its arrangements: n pairs of seeds
no one-sided p below 1/2^n (the sign-flip test), n runs a side unpaired none below
1/C(2n, n), and counts of n runs a side none below 4^-n (Boschloo's, at n/n against 0/n).
Holm's method over a sweep's k rules asks the smallest of their 2k one-sided p-values to be
at most level / 2k (a sequential sweep's: level / looks / 2k). A design whose seeds cannot
give that judges nothing whatever its runs do, so the sweep says so when it starts, one
line per rule, with the seeds that could; it still runs (a pilot may mean to), and the
report reads ``inconclusive (too few seeds)``.
"""

import math
from collections import Counter
from collections.abc import Sequence

from transformer_lab.runs.outcome import LEARNED, is_learned
from transformer_lab.sweep.hypotheses import Hypothesis

RESAMPLES = 9999  # the exact tests enumerate up to this many arrangements, sample beyond


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
    """A line per rule that no outcome of the ``jobs`` (their overrides) could decide: the
    fewest seeds among the configurations it compares (or ``seeds``, a sequential sweep's
    budget), what the first step of Holm's method asks and the seeds that could give it."""
    step = level / looks / (2 * len(hypotheses))
    lines = []
    for h in hypotheses:
        counts = Counter(
            tuple(sorted((k, v) for k, v in job.items() if k != replicate_key))
            for job in jobs
            if any(h.runs(job, value) for value in h.values)
        )
        fewest = min(counts.values(), default=0) if seeds is None else seeds
        if fewest == 0 or smallest_p_of(h.metric, fewest) <= step:
            continue
        needed = seeds_for(h.metric, step)
        lines.append(
            f"{h.field('metric')}: {fewest} seeds per configuration cannot decide it: no "
            f"one-sided p below {smallest_p_of(h.metric, fewest):.2g} from them, and Holm's "
            f"first step over the {2 * len(hypotheses)} tests of {len(hypotheses)} rules asks "
            f"{step:.2g}; {needed} seeds could"
        )
    return lines
