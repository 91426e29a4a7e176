"""The statistics behind the report's numbers on a continuous metric, at 95%: a
configuration's mean and its interval, the difference of two configurations with its
exact one-sided p-values, the seeds that would detect it, and steps to a target as
censored data.

- A mean over n runs gets Student's t interval with n - 1 degrees of freedom
  (``scipy.stats.t.interval``), cut to the values the metric can take: an accuracy's
  interval stays in [0, 1]. Cutting never drops the true mean, which lies inside those
  bounds, so the interval covers it at least as often as the t interval does. One run
  has no interval. The 95% is the t interval's: it assumes roughly normal values.
- A difference of two configurations is paired where both ran the same seeds, unpaired
  otherwise. Its p-values, one per direction so that a hypothesis is tested in the
  direction it predicted, are exact permutation tests (:mod:`.exact`: the sign-flip test
  of the per-seed differences, the permutation test of the runs' labels), which assume
  nothing of the values' shape. Its interval is descriptive: Student t over the per-seed
  differences (``scipy.stats.ttest_rel``), Welch's unpaired
  (``scipy.stats.ttest_ind(equal_var=False)``), which do assume normal differences; the
  word and the verdict come from the exact test. With no spread (every difference alike)
  there is no t interval; the exact test still judges the signs (every pair 0: p = 1).
- The seeds per configuration that would detect a difference of the size observed with
  80% power, at a given level: the noncentral t's power (``scipy.stats.nct.sf``, as
  pingouin computes it: statsmodels' solver returns NaN for large effects, scipy#17916)
  for the standardized effect observed, the exact test's power approximated by the t
  test's, and never fewer than the seeds whose exact test can reach that level at all
  (:func:`.exact.seeds_to_reach`) nor than :data:`MIN_RUNS`, the fewest runs a verdict
  is made from. Where the noncentral t gives no number the normal approximation stands
  in, and the report says so.
- Steps to a target are censored: a run that never reached it would have taken more than
  its ``max_steps``, so its number is a lower bound. Their median is exact only when it is
  a step some run reached; where a run that did not reach the target is at or below the
  middle it is only known to be larger: ``> m``.
"""

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from scipy import stats

from transformer_lab.console import unheard
from transformer_lab.report.exact import ExactTest, permutation, seeds_to_reach, sign_flip

CONFIDENCE = 0.95
POWER = 0.8
MIN_RUNS = 3  # no verdict from fewer runs per side: two values say nothing of the spread
MAX_SEEDS = 1000  # "> 1000 seeds": no real sweep would run them
NEGLIGIBLE = 1e-9  # a share of power no seed count turns on
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


@dataclass(frozen=True)
class Power:
    """The runs per configuration for 80% power (``MAX_SEEDS + 1``: more than
    :data:`MAX_SEEDS`), and whether the normal approximation stood in for the noncentral t
    (``approximate``), which the report then says."""

    seeds: int
    approximate: bool = False

    def text(self, power_of: str = "") -> str:
        many = f"> {MAX_SEEDS}" if self.seeds > MAX_SEEDS else str(self.seeds)
        note = " (normal approximation: the noncentral t gave no value)" * self.approximate
        return f"{many} seeds per configuration for 80% power{power_of}{note}"


def fewest_runs(power: Callable[[int], tuple[float, bool]], floor: int) -> Power:
    """The fewest runs ``n`` from ``floor`` (at least :data:`MIN_RUNS`) at which
    ``power(n)``, ``(power, approximate)``, increasing in n, reaches 80%: a bisection
    between ``floor`` and :data:`MAX_SEEDS`, which never meets a NaN."""
    low = max(MIN_RUNS, floor)
    if low > MAX_SEEDS:
        return Power(MAX_SEEDS + 1)
    found, approximate = power(low)
    if found >= POWER:
        return Power(low, approximate)
    found, approximate = power(MAX_SEEDS)
    if found < POWER:
        return Power(MAX_SEEDS + 1, approximate)
    high = MAX_SEEDS  # power(low) < POWER <= power(high)
    while high - low > 1:
        middle = (low + high) // 2
        found, flag = power(middle)
        if found >= POWER:
            high, approximate = middle, flag
        else:
            low = middle
    return Power(high, approximate)


def t_power(
    effect: float, n: int, alpha: float, paired: bool, two_sided: bool
) -> tuple[float, bool]:
    """``(power, approximate)`` of a t test of ``n`` runs a side at level ``alpha`` against
    a true standardized difference ``effect`` >= 0: the noncentral t's tails
    (``scipy.stats.nct``; both for a two-sided test, as statsmodels counts them).

    scipy's ``nct.cdf`` gives NaN far out in the lower tail (d = 5.4 at n = 3, two-sided).
    That tail is below P(T < 0) = Phi(-nc): taken as 0, the power is off by less than
    :data:`NEGLIGIBLE` wherever Phi(-nc) is, and otherwise it is a lower bound that the
    report marks ``approximate``; an upper tail that is NaN gives way to the normal
    approximation, marked too."""
    df, nc = (n - 1, effect * math.sqrt(n)) if paired else (2 * n - 2, effect * math.sqrt(n / 2))
    critical = float(stats.t.isf(alpha / (2 if two_sided else 1), df))
    upper, approximate = float(stats.nct.sf(critical, df, nc)), False
    if not math.isfinite(upper):
        upper, approximate = float(stats.norm.sf(critical - nc)), True
    lower = float(stats.nct.cdf(-critical, df, nc)) if two_sided else 0.0
    if not math.isfinite(lower):
        lower, approximate = 0.0, approximate or stats.norm.cdf(-nc) >= NEGLIGIBLE
    return upper + lower, bool(approximate)


def seeds_for_power(
    effect: float, alpha: float, paired: bool, two_sided: bool = False
) -> Power | None:
    """The runs per configuration at which the exact test at level ``alpha`` finds a true
    standardized difference ``effect`` (mean over standard deviation) with 80% power, by
    the t test's power (:func:`t_power`), and never before the test can reach ``alpha``
    (:func:`.exact.seeds_to_reach`); None for no effect."""
    size = abs(effect)
    if size == 0:
        return None
    reachable = seeds_to_reach(alpha / (2 if two_sided else 1), paired)
    if reachable is None:
        return Power(MAX_SEEDS + 1)
    return fewest_runs(lambda n: t_power(size, n, alpha, paired, two_sided), reachable)


@dataclass(frozen=True)
class Difference:
    """A - B of the values ``a`` and ``b`` (``paired``: ``a[i]`` and ``b[i]`` ran one
    seed): its estimate, its t interval (None and None with no spread), its exact test in
    both directions (:mod:`.exact`) and the standard deviation that standardizes it (of
    the per-seed differences, or the two sides' averaged; None with no spread)."""

    a: tuple[float, ...]
    b: tuple[float, ...]
    paired: bool
    estimate: float
    low: float | None
    high: float | None
    test: ExactTest
    spread: float | None

    @property
    def effect(self) -> float | None:
        """The standardized difference observed: the estimate over the spread."""
        return None if self.spread is None else self.estimate / self.spread

    @property
    def n_a(self) -> int:
        return len(self.a)

    @property
    def n_b(self) -> int:
        return len(self.b)

    @property
    def p_greater(self) -> float:  # A > B
        return self.test.p_greater

    @property
    def p_less(self) -> float:  # A < B
        return self.test.p_less

    @property
    def no_spread(self) -> bool:
        return self.low is None

    @property
    def smallest_p(self) -> float:
        """The smallest one-sided p-value the test of these runs can give."""
        return self.test.smallest_p

    @property
    def sizes(self) -> str:
        """``"3 pairs"``, ``"3 against 4 runs"``."""
        return f"{self.n_a} pairs" if self.paired else f"{self.n_a} against {self.n_b} runs"

    def shifted(self, shift: float) -> ExactTest:
        """The exact test of A - B - ``shift`` (one side of an equivalence's TOST)."""
        if self.paired:
            return sign_flip(_differences(self.a, self.b), shift)
        return permutation(self.a, self.b, shift)

    def seeds_for_power(self, alpha: float, two_sided: bool = False) -> Power | None:
        """:func:`seeds_for_power` of the effect observed; with no spread, the seeds whose
        test can reach ``alpha``; None with no difference observed."""
        if self.estimate == 0:
            return None
        if self.spread is None:
            return self._reachable(alpha / (2 if two_sided else 1))
        return seeds_for_power(self.effect, alpha, self.paired, two_sided)

    def seeds_for_equivalence(self, margin: float, alpha: float) -> Power | None:
        """The seeds at which TOST at ``alpha`` shows a true difference of the size observed
        to lie within ``margin`` with 80% power: the power of the one-sided test against
        the nearer bound, ``(margin - |estimate|) / spread``; None where the difference
        observed is at or beyond the margin (no seeds would show it within)."""
        room = margin - abs(self.estimate)
        if room <= 0:
            return None
        if self.spread is None:
            return self._reachable(alpha)
        return seeds_for_power(room / self.spread, alpha, self.paired)

    def seeds_to_reach(self, alpha: float) -> int | None:
        """The seeds per configuration whose test can give a one-sided p of ``alpha``."""
        return seeds_to_reach(alpha, self.paired)

    def _reachable(self, alpha: float) -> Power:
        reachable = self.seeds_to_reach(alpha)
        return Power(MAX_SEEDS + 1 if reachable is None else max(MIN_RUNS, reachable))


def _no_spread(spread: float, values: Sequence[float]) -> bool:
    """Whether ``spread`` is nothing but rounding of ``values``."""
    return spread <= RELATIVE_SPREAD * max(1.0, *(abs(v) for v in values))


def _differences(a: Sequence[float], b: Sequence[float]) -> list[float]:
    """The per-seed differences ``a[i] - b[i]``, those that are only rounding (0.3 - 0.1
    - 0.2) as 0, which no test should read as a sign."""
    pairs = zip(a, b, strict=True)
    return [0.0 if _no_spread(abs(x - y), [x, y]) else x - y for x, y in pairs]


def _t_interval(test) -> tuple[float, float]:
    """``(low, high)`` of a scipy t test's 95% interval, without scipy's warning about
    nearly equal values."""
    with unheard("t_test_precision"):
        interval = test.confidence_interval(CONFIDENCE)
    return float(interval.low), float(interval.high)


def paired_difference(a: Sequence[float], b: Sequence[float]) -> Difference:
    """A - B over pairs ``(a[i], b[i])``, the runs of one seed (at least two pairs)."""
    differences = _differences(a, b)
    mean, spread = statistics.fmean(differences), statistics.stdev(differences)
    test = sign_flip(differences)
    if _no_spread(spread, differences):
        return Difference(tuple(a), tuple(b), True, mean, None, None, test, None)
    low, high = _t_interval(stats.ttest_rel(a, b))
    return Difference(tuple(a), tuple(b), True, mean, low, high, test, spread)


def unpaired_difference(a: Sequence[float], b: Sequence[float]) -> Difference:
    """A - B of two unpaired samples (at least two values each), Welch's interval."""
    mean = statistics.fmean(a) - statistics.fmean(b)
    var_a, var_b = statistics.variance(a), statistics.variance(b)
    test = permutation(a, b)
    if _no_spread(math.sqrt(var_a + var_b), [*a, *b]):
        return Difference(tuple(a), tuple(b), False, mean, None, None, test, None)
    low, high = _t_interval(stats.ttest_ind(a, b, equal_var=False))
    spread = math.sqrt((var_a + var_b) / 2)  # Cohen's d's, the spreads averaged
    return Difference(tuple(a), tuple(b), False, mean, low, high, test, spread)


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
