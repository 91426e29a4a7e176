"""Exact tests of a difference on a continuous metric, from a sweep's few seeds.

With three to eight seeds a side, a t test's p-value rests on the values being normal, which
a sweep whose runs either learn or stall is not: three pairs can give a paired t p of 2e-5,
where no test that only assumes the seeds exchangeable can go below 1/8. So the report's
tests are permutation tests (``scipy.stats.permutation_test``), on the statistic a reader
sees, the mean difference:

- paired (runs of A and B that share a seed): the sign-flip test of the per-seed
  differences. If the setting changed nothing, each difference was as likely to come out
  with the other sign; the p-value is the share of the 2^n sign assignments whose mean is
  at least the one observed. Its smallest value is 1/2^n one-sided: 3 pairs cannot go
  below 1/8 (two-sided 1/4), 5 below 1/32, 6 below 1/64.
- unpaired: the permutation test of the runs' labels, over the C(n_a + n_b, n_a) ways to
  split the runs into the two sides (3 against 3: 20, smallest p 1/20).

Both are exact: every assignment is enumerated while there are at most
:data:`RESAMPLES` of them (up to 13 pairs, or 7 against 7 runs); beyond, a Monte Carlo test
of :data:`RESAMPLES` random assignments (seeded, so a report is the same each time), whose
p-value (k + 1) / (RESAMPLES + 1) keeps its level at any sample size (scipy's default
9,999). What a design can reach at best, before any run, is
:mod:`transformer_lab.sweep.design`'s. Shifted by a margin
(``shift``), the same tests give the two one-sided tests of an equivalence (TOST): exact
there too when the differences are symmetric about their mean (the effect is a shift).
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from scipy import stats

from transformer_lab.sweep.design import RESAMPLES, seeds_to_reach, smallest_p

SEED = 0  # the Monte Carlo tests' random assignments, the same in every report
__all__ = ["RESAMPLES", "ExactTest", "permutation", "seeds_to_reach", "sign_flip", "smallest_p"]


@dataclass(frozen=True)
class ExactTest:
    """One-sided p-values of ``A - B - shift`` above 0 (``p_greater``) and below
    (``p_less``); the test's ``name``, the number of ``arrangements`` (sign assignments or
    label splits) it has and whether it enumerated them all (``exact``)."""

    p_greater: float
    p_less: float
    name: str  # "sign-flip" or "permutation"
    arrangements: int
    exact: bool

    @property
    def smallest_p(self) -> float:
        """The smallest one-sided p-value this design can give at all."""
        return 1 / self.arrangements if self.exact else 1 / (RESAMPLES + 1)

    @property
    def text(self) -> str:
        """``"exact sign-flip test (all 8 sign assignments)"``."""
        unit = "sign assignments" if self.name == "sign-flip" else "label assignments"
        if self.exact:
            return f"exact {self.name} test (all {self.arrangements:,} {unit})"
        return f"Monte Carlo {self.name} test ({RESAMPLES:,} random {unit})"


def _mean_difference(x, y, axis):
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def _both_directions(data: tuple, statistic, permutation_type: str) -> tuple[float, float]:
    """``(p_greater, p_less)`` of one permutation test: the data's second row is the first
    negated, whose ``greater`` p-value is the first's ``less``, under the same assignments."""
    found = stats.permutation_test(
        data,
        statistic,
        permutation_type=permutation_type,
        alternative="greater",
        vectorized=True,
        n_resamples=RESAMPLES,
        random_state=SEED,
        axis=-1,
    )
    p_greater, p_less = (min(1.0, float(p)) for p in found.pvalue)
    return p_greater, p_less


@cache
def _sign_assignments(n: int) -> np.ndarray:
    """``[n, 2^n]`` every assignment of +1 and -1 to ``n`` differences (column k: bits of k)."""
    bits = (np.arange(2**n)[None, :] >> np.arange(n)[:, None]) & 1
    return (1 - 2 * bits).astype(float)


@cache
def _drawn_sign_assignments(n: int) -> np.ndarray:
    """``[n, RESAMPLES]`` the random assignments scipy's seeded Monte Carlo sign-flip test
    draws: a uniform pair for each assignment and difference (``RandomState(SEED)``), the
    difference keeping its sign where the pair comes out in order (scipy argsorts it)."""
    draws = np.random.RandomState(SEED).random(size=(RESAMPLES, n, 2))
    return np.where(draws[..., 0] <= draws[..., 1], 1.0, -1.0).T


def _sign_flip_p_values(shifted: np.ndarray, signs: np.ndarray, exact: bool) -> tuple[float, float]:
    """``(p_greater, p_less)`` of the sign-flip test over the assignments ``signs [n, k]``,
    every one at once: scipy's test without the machinery that costs it ~4 ms a call exact
    and ~20 ms Monte Carlo, which a grid's report pays in every cell and look. Its numbers
    to the last bit: each assignment's mean summed in the order scipy sums it (difference
    by difference, so a tie rounds as scipy rounds it), a tie counted within scipy's
    tolerance, 100 machine epsilons of the observed mean, and a Monte Carlo count plus one
    over the draws plus one (tests/report/test_statistics.py holds the two equal)."""
    total = np.zeros(signs.shape[1])
    for signed in signs * shifted[:, None]:  # difference by difference, as scipy sums
        total += signed
    means = total / len(shifted)  # [k]
    observed = np.mean(shifted)
    tie = abs(np.finfo(float).eps * 100 * observed)
    counts = np.count_nonzero(means >= observed - tie), np.count_nonzero(means <= observed + tie)
    added = 0 if exact else 1
    p_greater, p_less = ((count + added) / (len(means) + added) for count in counts)
    return float(p_greater), float(p_less)


def sign_flip(differences: Sequence[float], shift: float = 0.0) -> ExactTest:
    """The sign-flip test of the per-seed ``differences`` minus ``shift``."""
    shifted = np.asarray(differences, dtype=float) - shift
    arrangements = 2 ** len(shifted)
    exact = arrangements <= RESAMPLES
    signs = (_sign_assignments if exact else _drawn_sign_assignments)(len(shifted))
    p_greater, p_less = _sign_flip_p_values(shifted, signs, exact)
    return ExactTest(p_greater, p_less, "sign-flip", arrangements, exact)


def permutation(a: Sequence[float], b: Sequence[float], shift: float = 0.0) -> ExactTest:
    """The permutation test of the runs ``a`` (minus ``shift``) against ``b``."""
    x = np.asarray(a, dtype=float) - shift
    y = np.asarray(b, dtype=float)
    data = (np.stack([x, -x]), np.stack([y, -y]))
    p_greater, p_less = _both_directions(data, _mean_difference, "independent")
    arrangements = math.comb(len(x) + len(y), len(x))
    return ExactTest(p_greater, p_less, "permutation", arrangements, arrangements <= RESAMPLES)
