"""The statistics behind the report's numbers on a continuous metric, at 95%: a
configuration's mean and its interval, the difference of two configurations with its
one-sided p-values, the seeds that would detect it, and steps to a target as censored data.

- A mean over n runs gets Student's t interval with n - 1 degrees of freedom
  (``scipy.stats.t.interval``), cut to the values the metric can take: an accuracy's
  interval stays in [0, 1]. Cutting never drops the true mean, which lies inside those
  bounds, so the interval covers it at least as often as the t interval does. One run
  has no interval.
- A difference of two configurations is paired where both ran the same seeds (Student t
  over the per-seed differences, ``scipy.stats.ttest_rel``), unpaired otherwise (Welch,
  ``scipy.stats.ttest_ind(equal_var=False)``, which does not assume equal spreads). Its
  p-values are one-sided, one per direction, so that a hypothesis is tested in the
  direction it predicted. With no spread at all (every difference alike) there is no
  t distribution to judge by: no interval, no p-value (``no_spread``).
- The seeds per configuration that would detect a difference of the size observed with
  80% power, at a given level, one-sided: statsmodels' power of the t test
  (``TTestPower`` for pairs, ``TTestIndPower`` for two samples, the noncentral t), for
  the standardized effect observed. Never fewer than :data:`MIN_RUNS`, the fewest runs a
  verdict is made from.
- Steps to a target are censored: a run that never reached it would have taken more than
  its ``max_steps``, so its number is a lower bound. Their median is exact only when it is
  a step some run reached; where a run that did not reach the target is at or below the
  middle it is only known to be larger: ``> m``.
"""

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from scipy import stats
from statsmodels.stats.power import TTestIndPower, TTestPower

from transformer_lab.console import unheard

CONFIDENCE = 0.95
POWER = 0.8
MIN_RUNS = 3  # no verdict from fewer runs per side: two values say nothing of the spread
MAX_SEEDS = 1000  # "> 1000 seeds": no real sweep would run them
RELATIVE_SPREAD = (
    1e-12  # a spread this small is rounding: 0.61 - 0.51 and 0.51 - 0.41 differ by 1e-17
)

Bounds = tuple[float | None, float | None]


@dataclass(frozen=True)
class Estimate:
    """A mean over ``n`` values and its interval (None for one value)."""

    mean: float
    low: float | None
    high: float | None
    n: int


def _within(value: float, bounds: Bounds) -> float:
    low, high = bounds
    value = value if low is None else max(float(low), value)
    return value if high is None else min(float(high), value)


def estimate(values: Sequence[float], bounds: Bounds = (None, None)) -> Estimate:
    """The mean of ``values`` and its t interval, cut to ``bounds`` (the metric's range)."""
    n, mean = len(values), statistics.fmean(values)
    if n < 2:
        return Estimate(mean, None, None, n)
    sem = stats.sem(values)  # the sample std (n - 1) over sqrt(n)
    if sem == 0:
        return Estimate(mean, mean, mean, n)
    low, high = stats.t.interval(CONFIDENCE, n - 1, loc=mean, scale=sem)
    return Estimate(mean, _within(float(low), bounds), _within(float(high), bounds), n)


def seeds_for_power(effect: float, alpha: float, paired: bool, two_sided: bool = False) -> int:
    """The runs per configuration at which a t test at level ``alpha`` finds a true
    standardized difference ``effect`` (mean over standard deviation) with 80% power;
    ``MAX_SEEDS + 1`` for more than :data:`MAX_SEEDS`."""
    analysis = TTestPower() if paired else TTestIndPower()
    size, alternative = abs(effect), "two-sided" if two_sided else "larger"
    if size == 0:
        return MAX_SEEDS + 1

    def power(n: int) -> float:
        return analysis.power(size, n, alpha, alternative=alternative)

    if power(MIN_RUNS) >= POWER:
        return MIN_RUNS
    if power(MAX_SEEDS) < POWER:
        return MAX_SEEDS + 1
    with unheard("power_search"):
        n = analysis.solve_power(size, None, alpha, POWER, alternative=alternative)
    return math.ceil(n)


@dataclass(frozen=True)
class Difference:
    """A - B: its estimate, its 95% interval and one-sided p-values (None, None and None
    with no spread), paired or Welch's, ``n_a`` and ``n_b`` values (pairs: both the number
    of pairs), and the standardized effect observed (for power)."""

    estimate: float
    low: float | None
    high: float | None
    p_greater: float | None  # A > B
    p_less: float | None  # A < B
    paired: bool
    n_a: int
    n_b: int
    effect: float | None

    @property
    def no_spread(self) -> bool:
        return self.p_greater is None

    @property
    def excludes_zero(self) -> bool:
        return not self.no_spread and (self.low > 0 or self.high < 0)

    def seeds_for_power(self, alpha: float, two_sided: bool = False) -> int | None:
        """:func:`seeds_for_power` of the effect observed; None with none observed."""
        if not self.effect:
            return None
        return seeds_for_power(self.effect, alpha, self.paired, two_sided)


def _no_spread(spread: float, values: Sequence[float]) -> bool:
    """Whether ``spread`` is nothing but rounding of ``values``."""
    return spread <= RELATIVE_SPREAD * max(1.0, *(abs(v) for v in values))


def _t_test(test) -> tuple[float, float, float, float]:
    """``(low, high, p_greater, p_less)`` of a scipy t test ``test(alternative)``, without
    scipy's warning about nearly equal values."""
    with unheard("t_test_precision"):
        interval = test("two-sided").confidence_interval(CONFIDENCE)
        p_greater, p_less = test("greater").pvalue, test("less").pvalue
    return float(interval.low), float(interval.high), float(p_greater), float(p_less)


def paired_difference(a: Sequence[float], b: Sequence[float]) -> Difference:
    """A - B over pairs ``(a[i], b[i])``, the runs of one seed (at least two pairs)."""
    differences = [x - y for x, y in zip(a, b, strict=True)]
    mean, spread = statistics.fmean(differences), statistics.stdev(differences)
    if _no_spread(spread, differences):
        return Difference(mean, None, None, None, None, True, len(a), len(b), None)
    found = _t_test(lambda alternative: stats.ttest_rel(a, b, alternative=alternative))
    return Difference(mean, *found, True, len(a), len(b), mean / spread)


def welch_difference(a: Sequence[float], b: Sequence[float]) -> Difference:
    """A - B of two unpaired samples (at least two values each), Welch's interval."""
    mean = statistics.fmean(a) - statistics.fmean(b)
    var_a, var_b = statistics.variance(a), statistics.variance(b)
    if _no_spread(math.sqrt(var_a + var_b), [*a, *b]):
        return Difference(mean, None, None, None, None, False, len(a), len(b), None)
    found = _t_test(
        lambda alternative: stats.ttest_ind(a, b, equal_var=False, alternative=alternative)
    )
    effect = mean / math.sqrt((var_a + var_b) / 2)  # Cohen's d, the spreads averaged
    return Difference(mean, *found, False, len(a), len(b), effect)


@dataclass(frozen=True)
class CensoredMedian:
    """The median of ``n`` runs' steps to a target, ``reached`` of which reached it:
    ``value``, or, when ``exact`` is False, a lower bound (the median is ``> value``)."""

    value: float
    exact: bool
    reached: int
    n: int


def censored_median(steps: Sequence[tuple[float, bool]]) -> CensoredMedian:
    """The median of ``[(step, reached)]``, a run that did not reach the target given as
    ``(its max_steps, False)``: a lower bound of the step it would have taken."""
    ordered = sorted(steps, key=lambda s: (s[0], not s[1]))  # a bound after an equal step
    n = len(ordered)
    middle = ordered[(n - 1) // 2 : n // 2 + 1]  # one value for odd n, two for even
    first_censored = next((i for i, (_, reached) in enumerate(ordered) if not reached), n)
    value = statistics.fmean(step for step, _ in middle)
    exact = first_censored > n // 2  # every run up to the middle reached it
    return CensoredMedian(value, exact, sum(reached for _, reached in steps), n)
