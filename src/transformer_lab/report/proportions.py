"""The statistics of outcomes: how many runs of a configuration learned, ``k/n``, and the
comparison of two such rates.

Where a run either learns or stalls, the mean of a metric over a few seeds is the mean of
a two-valued variable, and a t interval on it covers the truth far less often than it
says (about 68% of the time for a "95%" interval on three runs, simulated). Counts have
exact methods instead:

- A rate's interval is Clopper–Pearson's (``scipy.stats.binomtest(...).proportion_ci``,
  ``method="exact"``): at least 95% coverage for any true rate, inside [0, 1] (0/3 reads
  [0.000, 0.708]).
- Two rates are compared by Boschloo's exact test (``scipy.stats.boschloo_exact``), one
  p-value per direction: it never exceeds Fisher's exact test's p-value and keeps its
  level for any common rate. The pilot of post-norm with and without warmup, 5/5 against
  0/6, gives p = 0.0005 (Fisher: 0.0022).
- The difference of the rates gets Newcombe's hybrid score interval (his method 10, from
  the two Wilson intervals), which stays in [-1, 1] and, unlike the Wald interval, is not
  of zero width at 0/n or n/n.
- The runs per configuration that would detect the observed rates' difference with 80%
  power: statsmodels' normal approximation (``NormalIndPower`` on Cohen's h), never fewer
  than the three runs a verdict needs.
"""

import math
from dataclasses import dataclass
from functools import lru_cache

from scipy import stats
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_effectsize

from transformer_lab.report.statistics import CONFIDENCE, MAX_SEEDS, MIN_RUNS, POWER


def rate_interval(k: int, n: int) -> tuple[float, float]:
    """Clopper–Pearson's 95% interval of the rate of ``k`` successes in ``n`` runs."""
    found = stats.binomtest(k, n).proportion_ci(CONFIDENCE, method="exact")
    return float(found.low), float(found.high)


def _wilson(k: int, n: int) -> tuple[float, float]:
    found = stats.binomtest(k, n).proportion_ci(CONFIDENCE, method="wilson")
    return float(found.low), float(found.high)


@lru_cache(maxsize=4096)
def boschloo_greater(k_a: int, n_a: int, k_b: int, n_b: int) -> float:
    """The one-sided p-value of Boschloo's exact test that A's rate exceeds B's; 1 where
    the table says nothing (every run alike: all learned, or none)."""
    if k_a + k_b in (0, n_a + n_b):
        return 1.0
    table = [[k_a, k_b], [n_a - k_a, n_b - k_b]]  # columns: the two configurations
    return float(stats.boschloo_exact(table, alternative="greater").pvalue)


@dataclass(frozen=True)
class RateDifference:
    """A's rate ``k_a/n_a`` minus B's ``k_b/n_b``: the estimate, its 95% interval and a
    one-sided p-value per direction (Boschloo)."""

    k_a: int
    n_a: int
    k_b: int
    n_b: int

    @property
    def estimate(self) -> float:
        return self.k_a / self.n_a - self.k_b / self.n_b

    @property
    def interval(self) -> tuple[float, float]:
        """Newcombe's hybrid score interval of the difference."""
        p_a, p_b = self.k_a / self.n_a, self.k_b / self.n_b
        (low_a, high_a), (low_b, high_b) = _wilson(self.k_a, self.n_a), _wilson(self.k_b, self.n_b)
        low = self.estimate - math.sqrt((p_a - low_a) ** 2 + (high_b - p_b) ** 2)
        high = self.estimate + math.sqrt((high_a - p_a) ** 2 + (p_b - low_b) ** 2)
        return low, high

    @property
    def p_greater(self) -> float:
        return boschloo_greater(self.k_a, self.n_a, self.k_b, self.n_b)

    @property
    def p_less(self) -> float:
        return boschloo_greater(self.k_b, self.n_b, self.k_a, self.n_a)

    def seeds_for_power(self, alpha: float, two_sided: bool = False) -> int | None:
        """Runs per configuration for 80% power at level ``alpha`` (one-sided unless
        ``two_sided``) against the rates observed; None where they are equal."""
        p_a, p_b = self.k_a / self.n_a, self.k_b / self.n_b
        if p_a == p_b:
            return None
        effect = abs(proportion_effectsize(p_a, p_b))
        analysis, alternative = NormalIndPower(), "two-sided" if two_sided else "larger"
        if analysis.power(effect, MIN_RUNS, alpha, alternative=alternative) >= POWER:
            return MIN_RUNS
        n = analysis.solve_power(effect, None, alpha, POWER, alternative=alternative)
        return MIN_RUNS if n < MIN_RUNS else min(math.ceil(n), MAX_SEEDS + 1)
