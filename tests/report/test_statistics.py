"""The report's statistics on chosen numbers: every interval is scipy.stats' to 1e-9 (t with
n - 1 degrees of freedom, paired t, Welch), the seeds that would detect a difference follow
their stated rule, and steps to a target are censored data."""

import math

import pytest
from scipy import stats

from transformer_lab.report.statistics import (
    censored_median,
    estimate,
    paired_difference,
    welch_difference,
)

A = [0.81, 0.74, 0.93]
B = [0.52, 0.47, 0.65]  # A - B per seed: 0.29, 0.27, 0.28


def test_a_mean_gets_the_student_t_interval_with_n_minus_1_degrees_of_freedom():
    found = estimate(A)
    low, high = stats.t.interval(0.95, 2, loc=sum(A) / 3, scale=stats.sem(A))
    assert found.n == 3
    assert found.mean == pytest.approx(sum(A) / 3, abs=1e-12)
    assert found.low == pytest.approx(low, abs=1e-9)
    assert found.high == pytest.approx(high, abs=1e-9)
    # the same interval as the one-sample t test's: mean ± t(0.975, 2) * s / sqrt(3)
    one_sample = stats.ttest_1samp(A, 0.0).confidence_interval(0.95)
    assert (found.low, found.high) == pytest.approx(tuple(one_sample), abs=1e-9)
    half = stats.t.ppf(0.975, 2) * stats.tstd(A) / math.sqrt(3)  # 4.303 x s / sqrt(3)
    assert found.high - found.mean == pytest.approx(half, abs=1e-9)


def test_one_value_has_no_interval_and_no_spread_an_interval_of_its_point():
    assert estimate([0.5]) == estimate([0.5]).__class__(0.5, None, None, 1)
    flat = estimate([1.0, 1.0, 1.0])
    assert (flat.low, flat.mean, flat.high, flat.n) == (1.0, 1.0, 1.0, 3)


def test_a_paired_difference_is_the_t_interval_of_the_per_seed_differences():
    found = paired_difference(A, B)
    expected = stats.ttest_rel(A, B).confidence_interval(0.95)
    differences = [a - b for a, b in zip(A, B, strict=True)]
    assert found.paired and (found.n_a, found.n_b) == (3, 3)
    assert found.estimate == pytest.approx(sum(differences) / 3, abs=1e-12)
    assert found.low == pytest.approx(expected.low, abs=1e-9)
    assert found.high == pytest.approx(expected.high, abs=1e-9)
    assert found.excludes_zero  # 0.280 [0.255, 0.305]: the seeds agree on it


def test_an_unpaired_difference_is_welchs_interval():
    b = [0.52, 0.61, 0.49, 0.70]
    found = welch_difference(A, b)
    expected = stats.ttest_ind(A, b, equal_var=False).confidence_interval(0.95)
    assert not found.paired and (found.n_a, found.n_b) == (3, 4)
    assert found.estimate == pytest.approx(sum(A) / 3 - sum(b) / 4, abs=1e-12)
    assert found.low == pytest.approx(expected.low, abs=1e-9)
    assert found.high == pytest.approx(expected.high, abs=1e-9)
    # Welch, not the pooled-variance interval, which is narrower here
    pooled = stats.ttest_ind(A, b, equal_var=True).confidence_interval(0.95)
    assert abs(found.low - pooled.low) > 1e-3


def power_by_hand(effect: float, n: int, alpha: float, paired: bool, two_sided: bool) -> float:
    """The power of a t test of n runs a side at a true standardized effect, from the
    noncentral t distribution (scipy.stats.nct), the lower tail left out as statsmodels does
    for a two-sided test whose effect is positive."""
    df, nc = (n - 1, effect * math.sqrt(n)) if paired else (2 * n - 2, effect * math.sqrt(n / 2))
    critical = stats.t.ppf(1 - alpha / (2 if two_sided else 1), df)
    upper = stats.nct.sf(critical, df, nc)
    return upper + (stats.nct.cdf(-critical, df, nc) if two_sided else 0.0)


def test_seeds_for_power_are_the_first_n_at_which_the_t_test_finds_the_effect_4_times_in_5():
    a, b = [0.50, 0.62, 0.41], [0.47, 0.55, 0.44]  # differences 0.03, 0.07, -0.03
    found = paired_difference(a, b)
    assert not found.excludes_zero
    d = found.estimate / stats.tstd([x - y for x, y in zip(a, b, strict=True)])
    assert found.effect == pytest.approx(d, abs=1e-12)
    for alpha, two_sided in ((0.05, True), (0.05 / 3, False)):
        n = found.seeds_for_power(alpha, two_sided)
        assert power_by_hand(d, n, alpha, True, two_sided) >= 0.8
        assert power_by_hand(d, n - 1, alpha, True, two_sided) < 0.8
    # d = 0.46: (2.80 / d)^2 = 36.5 by the normal approximation, 39 with t's heavier tails
    assert found.seeds_for_power(0.05, two_sided=True) == 39
    unpaired = welch_difference(a, b)
    m = unpaired.seeds_for_power(0.05, two_sided=True)
    assert power_by_hand(unpaired.effect, m, 0.05, False, True) >= 0.8
    assert power_by_hand(unpaired.effect, m - 1, 0.05, False, True) < 0.8
    # never fewer than the three runs a verdict needs, however large the effect
    assert paired_difference([0.9, 0.95, 0.91], [0.1, 0.12, 0.11]).seeds_for_power(0.05) == 3


def test_no_spread_is_no_interval_and_no_test_even_through_rounding():
    # 0.61 - 0.51 and 0.51 - 0.41 differ by 1e-17 in floating point: the same difference
    flat = paired_difference([0.51, 0.61], [0.41, 0.51])
    assert flat.no_spread and (flat.low, flat.high, flat.p_greater) == (None, None, None)
    assert flat.estimate == pytest.approx(0.1)
    assert not flat.excludes_zero
    assert welch_difference([0.5, 0.5, 0.5], [0.4, 0.4, 0.4]).no_spread


def test_one_sided_p_values_are_scipys_in_each_direction():
    found = paired_difference(A, B)
    assert found.p_greater == pytest.approx(
        stats.ttest_rel(A, B, alternative="greater").pvalue, abs=1e-12
    )
    assert found.p_less == pytest.approx(
        stats.ttest_rel(A, B, alternative="less").pvalue, abs=1e-12
    )


def test_an_accuracys_interval_stays_inside_0_and_1():
    low = estimate([0.001, 0.0, 0.002], (0.0, 1.0))  # t's interval: [-0.002, 0.004]
    assert (low.low, round(low.high, 6)) == (0.0, 0.003484)
    high = estimate([0.99, 1.0, 0.97], (0.0, 1.0))
    assert high.high == 1.0 and high.low == pytest.approx(
        stats.t.interval(0.95, 2, loc=high.mean, scale=stats.sem([0.99, 1.0, 0.97]))[0]
    )


def test_the_median_steps_count_a_run_that_never_reached_the_target_as_beyond_max_steps():
    every = censored_median([(299.0, True), (99.0, True), (199.0, True)])
    assert (every.value, every.exact, every.reached, every.n) == (199.0, True, 3, 3)
    two = censored_median([(99.0, True), (199.0, True)])
    assert (two.value, two.exact) == (149.0, True)
    # half reached: the median lies between 99 and a run beyond 600 steps, so above 349.5
    half = censored_median([(99.0, True), (600.0, False)])
    assert (half.value, half.exact, half.reached, half.n) == (349.5, False, 1, 2)
    # fewer than half reached: the median is a run that did not, "> max_steps"
    few = censored_median([(600.0, False), (99.0, True), (600.0, False)])
    assert (few.value, few.exact, few.reached) == (600.0, False, 1)
    none = censored_median([(600.0, False), (600.0, False)])
    assert (none.value, none.exact, none.reached) == (600.0, False, 0)
    # more than half reached: exact, the runs that did not are above the middle
    most = censored_median([(600.0, False), (99.0, True), (149.0, True)])
    assert (most.value, most.exact, most.reached) == (149.0, True, 2)
