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
  the two Wilson intervals; statsmodels' ``confint_proportions_2indep(method="newcomb")``),
  which stays in [-1, 1] and, unlike the Wald interval, is not of zero width at 0/n or n/n.
- The runs per configuration that would detect the observed rates' difference with 80%
  power: the normal approximation on Cohen's h (statsmodels' ``NormalIndPower``, written
  out: a closed form with no solver to fail), never fewer than the runs at which
  Boschloo's test can reach the level at all (n/n against 0/n gives 4^-n: 3 runs a side
  reach 0.016, 4 reach 0.0039) nor than the three runs a verdict needs.
"""

import math
from dataclasses import dataclass
from functools import lru_cache

from scipy import stats
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_effectsize

from transformer_lab.console import without_optimiser_lines
from transformer_lab.report.statistics import (
    CONFIDENCE,
    Power,
    fewest_runs,
)
from transformer_lab.runs.outcome import LEARNED
from transformer_lab.sweep.design import seeds_for


def rate_interval(k: int, n: int) -> tuple[float, float]:
    """Clopper–Pearson's 95% interval of the rate of ``k`` successes in ``n`` runs."""
    found = stats.binomtest(k, n).proportion_ci(CONFIDENCE, method="exact")
    return float(found.low), float(found.high)


@lru_cache(maxsize=4096)
def boschloo_greater(k_a: int, n_a: int, k_b: int, n_b: int) -> float:
    """The one-sided p-value of Boschloo's exact test that A's rate exceeds B's; 1 where
    the table says nothing (every run alike: all learned, or none)."""
    if k_a + k_b in (0, n_a + n_b):
        return 1.0
    table = [[k_a, k_b], [n_a - k_a, n_b - k_b]]  # columns: the two configurations
    with without_optimiser_lines():
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
        low, high = confint_proportions_2indep(
            self.k_a, self.n_a, self.k_b, self.n_b, method="newcomb", alpha=1 - CONFIDENCE
        )
        return float(low), float(high)

    @property
    def p_greater(self) -> float:
        return boschloo_greater(self.k_a, self.n_a, self.k_b, self.n_b)

    @property
    def p_less(self) -> float:
        return boschloo_greater(self.k_b, self.n_b, self.k_a, self.n_a)

    @property
    def smallest_p(self) -> float:
        """The smallest one-sided p-value Boschloo's test of these run counts can give:
        that of every run of one side learning and none of the other."""
        return min(
            boschloo_greater(self.n_a, self.n_a, 0, self.n_b),
            boschloo_greater(0, self.n_a, self.n_b, self.n_b),
        )

    @property
    def sizes(self) -> str:
        return f"{self.n_a} against {self.n_b} runs"

    def seeds_for_power(self, alpha: float, two_sided: bool = False) -> Power | None:
        """Runs per configuration for 80% power at level ``alpha`` (one-sided unless
        ``two_sided``) against the rates observed; None where they are equal."""
        p_a, p_b = self.k_a / self.n_a, self.k_b / self.n_b
        if p_a == p_b:
            return None
        h = abs(proportion_effectsize(p_a, p_b))
        critical = stats.norm.isf(alpha / (2 if two_sided else 1))

        def power(n: int) -> tuple[float, bool]:  # NormalIndPower's, at equal sizes
            shift = h * math.sqrt(n / 2)
            found = stats.norm.sf(critical - shift) + two_sided * stats.norm.cdf(-critical - shift)
            return float(found), False

        return fewest_runs(power, self.seeds_to_reach(alpha / (2 if two_sided else 1)))

    @staticmethod
    def seeds_to_reach(alpha: float) -> int:
        """The fewest runs a side at which Boschloo's test can give a one-sided p-value at
        most ``alpha`` (n/n against 0/n: 4^-n, :func:`~transformer_lab.sweep.design.seeds_for`)."""
        return seeds_for(LEARNED, alpha)
