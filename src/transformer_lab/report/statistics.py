"""The statistics behind the report's numbers, all at 95%: a configuration's mean and its
interval, the difference of two configurations, and steps to a target as censored data.

- A mean over n runs gets Student's t interval with n - 1 degrees of freedom
  (``scipy.stats.t.interval`` around the mean, scaled by its standard error); one run has
  no interval.
- A difference of two configurations is paired where both ran the same seeds (Student t
  over the per-seed differences, ``scipy.stats.ttest_rel``), unpaired otherwise (Welch's
  interval, ``scipy.stats.ttest_ind(equal_var=False)``, which does not assume equal
  spreads). With no spread at all (every value alike) the interval is the point itself:
  scipy has no t distribution of scale 0.
- How many seeds would detect a difference that was not detected: the smallest n per
  configuration at which the 95% half-width, for the spread observed, falls below the
  difference observed. At that n a true difference of that size is found about half the
  time; to find it reliably (80%), take about twice as many.
- Steps to a target are censored: a run that never reached it would have taken more than
  its ``max_steps``, so its number is a lower bound. Their median is exact only when it is
  a step some run reached; where a run that did not reach the target is at or below the
  middle it is only known to be larger: ``> m``.
"""

import math
import statistics
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from scipy import stats

CONFIDENCE = 0.95
MAX_SEEDS = 1000  # "> 1000 seeds": no real sweep would run them


@dataclass(frozen=True)
class Estimate:
    """A mean over ``n`` values and its interval (None for one value)."""

    mean: float
    low: float | None
    high: float | None
    n: int


def estimate(values: Sequence[float]) -> Estimate:
    n, mean = len(values), statistics.fmean(values)
    if n < 2:
        return Estimate(mean, None, None, n)
    sem = stats.sem(values)  # the sample std (n - 1) over sqrt(n)
    if sem == 0:
        return Estimate(mean, mean, mean, n)
    low, high = stats.t.interval(CONFIDENCE, n - 1, loc=mean, scale=sem)
    return Estimate(mean, float(low), float(high), n)


@dataclass(frozen=True)
class Difference:
    """A - B: its estimate and interval, paired or Welch's, ``n_a`` and ``n_b`` values
    (pairs: both the number of pairs), and for a difference the interval does not
    detect, the seeds per configuration that would (None: no difference observed)."""

    estimate: float
    low: float
    high: float
    paired: bool
    n_a: int
    n_b: int
    seeds_to_detect: int | None

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0


def _t_quantile(df: float) -> float:
    return float(stats.t.ppf(0.5 + CONFIDENCE / 2, df))


def _seeds_to_detect(difference: float, half_width: Callable[[int], float]) -> int | None:
    """The smallest n >= 2 whose ``half_width(n)`` is below ``|difference|``."""
    if difference == 0:
        return None
    n = next((n for n in range(2, MAX_SEEDS + 1) if half_width(n) < abs(difference)), None)
    return MAX_SEEDS + 1 if n is None else n


def _interval(test) -> tuple[float, float]:
    """The ``CONFIDENCE`` interval of a scipy t test's result ``test()``, without scipy's
    warning about a sample of equal values (its variance 0: exact here, not imprecise)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Precision loss occurred", RuntimeWarning)
        interval = test().confidence_interval(CONFIDENCE)
    return float(interval.low), float(interval.high)


def paired_difference(a: Sequence[float], b: Sequence[float]) -> Difference:
    """A - B over pairs ``(a[i], b[i])``, the runs of one seed (at least two pairs)."""
    differences = [x - y for x, y in zip(a, b, strict=True)]
    mean, spread = statistics.fmean(differences), statistics.stdev(differences)
    if spread == 0:
        low = high = mean
    else:
        low, high = _interval(lambda: stats.ttest_rel(a, b))
    seeds = _seeds_to_detect(mean, lambda n: _t_quantile(n - 1) * spread / math.sqrt(n))
    return Difference(mean, low, high, True, len(a), len(b), seeds)


def welch_difference(a: Sequence[float], b: Sequence[float]) -> Difference:
    """A - B of two unpaired samples (at least two values each), Welch's interval."""
    mean = statistics.fmean(a) - statistics.fmean(b)
    var_a, var_b = statistics.variance(a), statistics.variance(b)
    if var_a == var_b == 0:
        low = high = mean
    else:
        low, high = _interval(lambda: stats.ttest_ind(a, b, equal_var=False))

    def half_width(n: int) -> float:  # n runs on each side, Welch-Satterthwaite's df
        if var_a == var_b == 0:
            return 0.0
        df = (n - 1) * (var_a + var_b) ** 2 / (var_a**2 + var_b**2)
        return _t_quantile(df) * math.sqrt((var_a + var_b) / n)

    return Difference(mean, low, high, False, len(a), len(b), _seeds_to_detect(mean, half_width))


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
