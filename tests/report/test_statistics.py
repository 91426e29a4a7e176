"""The report's statistics on chosen numbers: every interval is scipy.stats' to 1e-9 (t with
n - 1 degrees of freedom, paired t, Welch), every p-value scipy's exact permutation test's,
the seeds that would detect a difference follow their stated rule at any effect size, and
steps to a target are censored data."""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.power import TTestPower

from transformer_lab.report import statistics as statistics_module
from transformer_lab.report.exact import RESAMPLES, seeds_to_reach, sign_flip, smallest_p
from transformer_lab.report.statistics import (
    censored_median,
    estimate,
    paired_difference,
    seeds_for_power,
    t_power,
    unpaired_difference,
)

from .conftest import scipy_p

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
    assert found.low > 0  # 0.280 [0.255, 0.305]: the seeds agree on it


def test_a_paired_difference_is_judged_by_the_exact_sign_flip_test_of_scipy():
    found = paired_difference(A, B)
    assert found.test.name == "sign-flip" and found.test.exact
    assert found.p_greater == pytest.approx(scipy_p(A, B, "samples", "greater"), abs=1e-12)
    assert found.p_less == pytest.approx(scipy_p(A, B, "samples", "less"), abs=1e-12)
    # three pairs all positive: 1 of the 8 sign assignments is as large, whatever the sizes
    assert (found.p_greater, found.p_less) == (1 / 8, 1.0)
    assert found.smallest_p == 1 / 8
    # where the paired t test would say 2e-4, the exact test cannot go below 1/8
    assert stats.ttest_rel(A, B, alternative="greater").pvalue < 0.001
    assert found.test.text == "exact sign-flip test (all 8 sign assignments)"


@settings(max_examples=100, deadline=None)
@given(
    differences=st.lists(
        st.one_of(  # ties that only rounding can break, zeros, beside any values
            st.sampled_from([-1.0, 0.0, 1.0, 0.1, -0.2, 0.3, 550.0, -587.0, 325.0, -290.0]),
            st.floats(-1e3, 1e3, allow_nan=False),
        ),
        min_size=2,  # a paired difference's fewest (scipy's too)
        max_size=13,  # 2^13 = 8192: every count the exact test enumerates
    ),
    shift=st.sampled_from([0.0, 0.05, -0.1]),
)
@example([-1.0, -1.0, 1.0, 550.0, 325.0, -587.0, -290.0, -1.0], -0.1)  # rounding decides a tie
def test_the_sign_flip_test_is_scipys_exact_test_to_the_last_bit(differences, shift):
    """The report enumerates the sign assignments itself (scipy's machinery cost ~4 ms a
    call, most of a grid's report's time): scipy's one-sample sign-flip test's p-values
    exactly, near-ties that rounding decides included (the example: summed in another
    order, one more assignment ties and p_greater is 0.546875, not 0.54296875)."""
    found = sign_flip(differences, shift)
    shifted = np.asarray(differences) - shift

    def scipy_p_value(alternative: str) -> float:
        scipys = stats.permutation_test(
            (shifted,), np.mean, permutation_type="samples", alternative=alternative, axis=-1
        )
        return float(scipys.pvalue)

    assert found.exact and found.arrangements == 2 ** len(differences)
    assert (found.p_greater, found.p_less) == (scipy_p_value("greater"), scipy_p_value("less"))


@settings(max_examples=60, deadline=None)
@given(
    differences=st.lists(
        st.one_of(  # as above
            st.sampled_from([-1.0, 0.0, 1.0, 0.1, -0.2, 0.3, 550.0, -587.0, 325.0, -290.0]),
            st.floats(-1e3, 1e3, allow_nan=False),
        ),
        min_size=14,  # 2^14 = 16384 > 9999: the Monte Carlo test
        max_size=20,
    ),
    shift=st.sampled_from([0.0, 0.05, -0.1]),
)
@example(  # rounding decides a tie
    [0.1, 0.1, 0.3, 0.1, -0.2, 0.3, 0.1, -290.0, 550.0, -1.0, 325.0, 0.0, 0.3, -587.0, 1.0, 0.1],
    0.05,
)
def test_past_9999_assignments_the_sign_flip_test_is_scipys_seeded_draws_to_the_last_bit(
    differences, shift
):
    """The report draws scipy's 9,999 random sign assignments itself (scipy's machinery
    cost ~20 ms a call, which a grid's report at 16 seeds pays in every cell): the same
    assignments and the same p-values exactly (the example: each mean summed pairwise
    instead of difference by difference, p_greater is 0.5206, not scipy's 0.5207)."""
    found = sign_flip(differences, shift)
    shifted = np.asarray(differences) - shift

    def scipy_p_value(alternative: str) -> float:
        scipys = stats.permutation_test(
            (shifted,),
            np.mean,
            permutation_type="samples",
            alternative=alternative,
            axis=-1,
            n_resamples=RESAMPLES,
            random_state=0,
        )
        return float(scipys.pvalue)

    assert not found.exact and found.arrangements == 2 ** len(differences)
    assert (found.p_greater, found.p_less) == (scipy_p_value("greater"), scipy_p_value("less"))


def test_an_unpaired_difference_is_welchs_interval_and_scipys_permutation_test():
    b = [0.52, 0.61, 0.49, 0.70]
    found = unpaired_difference(A, b)
    expected = stats.ttest_ind(A, b, equal_var=False).confidence_interval(0.95)
    assert not found.paired and (found.n_a, found.n_b) == (3, 4)
    assert found.estimate == pytest.approx(sum(A) / 3 - sum(b) / 4, abs=1e-12)
    assert found.low == pytest.approx(expected.low, abs=1e-9)
    assert found.high == pytest.approx(expected.high, abs=1e-9)
    # Welch, not the pooled-variance interval, which is narrower here
    pooled = stats.ttest_ind(A, b, equal_var=True).confidence_interval(0.95)
    assert abs(found.low - pooled.low) > 1e-3
    assert found.test.name == "permutation" and found.test.arrangements == 35  # C(7, 3)
    assert found.p_greater == pytest.approx(scipy_p(A, b, "independent", "greater"), abs=1e-12)
    assert found.p_less == pytest.approx(scipy_p(A, b, "independent", "less"), abs=1e-12)
    assert found.p_greater == 1 / 35  # A's three above all of B's four


def test_past_9999_arrangements_the_test_is_scipys_seeded_monte_carlo():
    rng = np.random.default_rng(5)
    a, b = rng.normal(0.5, 0.1, 14), rng.normal(0.45, 0.1, 14)  # 2^14 = 16384 > 9999
    found = paired_difference(list(a), list(b))
    assert not found.test.exact and found.test.arrangements == 2**14
    assert found.p_greater == pytest.approx(scipy_p(a, b, "samples", "greater"), abs=1e-12)
    assert found.smallest_p == 1 / 10000  # (0 + 1) / (9999 + 1): never 0
    assert found.test.text == "Monte Carlo sign-flip test (9,999 random sign assignments)"


def test_the_fewest_seeds_whose_exact_test_can_reach_a_level():
    assert [smallest_p(n, n, paired=True) for n in (3, 5, 6)] == [1 / 8, 1 / 32, 1 / 64]
    assert smallest_p(3, 3, paired=False) == 1 / 20
    assert seeds_to_reach(0.025, paired=True) == 6  # one rule, both directions: two-sided 5%
    assert seeds_to_reach(0.05, paired=True) == 5
    assert seeds_to_reach(0.025, paired=False) == 4  # 1/70 against 3 a side's 1/20
    assert seeds_to_reach(0.05 / 3 / 6, paired=True) == 9  # warmup's looks, 3 rules
    assert seeds_to_reach(1e-5, paired=True) is None  # below a Monte Carlo test's 1/10000


def power_by_hand(effect: float, n: int, alpha: float, paired: bool, two_sided: bool) -> float:
    """The power of a t test of n runs a side at a true standardized effect, from the
    noncentral t distribution (scipy.stats.nct), both tails for a two-sided test as
    statsmodels counts them (a lower tail scipy cannot compute, far from the mass, as 0)."""
    df, nc = (n - 1, effect * math.sqrt(n)) if paired else (2 * n - 2, effect * math.sqrt(n / 2))
    critical = stats.t.ppf(1 - alpha / (2 if two_sided else 1), df)
    lower = stats.nct.cdf(-critical, df, nc) if two_sided else 0.0
    return stats.nct.sf(critical, df, nc) + (0.0 if math.isnan(lower) else lower)


def test_seeds_for_power_are_the_first_n_at_which_the_t_test_finds_the_effect_4_times_in_5():
    a, b = [0.50, 0.62, 0.41], [0.47, 0.55, 0.44]  # differences 0.03, 0.07, -0.03
    found = paired_difference(a, b)
    d = found.estimate / stats.tstd([x - y for x, y in zip(a, b, strict=True)])
    assert found.effect == pytest.approx(d, abs=1e-12)
    for alpha, two_sided in ((0.05, True), (0.05 / 3, False)):
        n = found.seeds_for_power(alpha, two_sided).seeds
        assert power_by_hand(d, n, alpha, True, two_sided) >= 0.8
        assert power_by_hand(d, n - 1, alpha, True, two_sided) < 0.8
    # d = 0.46: statsmodels' solver says 38.5 seeds, the first whole number 39
    solved = TTestPower().solve_power(d, None, 0.05, 0.8, alternative="two-sided")
    assert found.seeds_for_power(0.05, two_sided=True).seeds == math.ceil(solved) == 39
    unpaired = unpaired_difference(a, b)
    m = unpaired.seeds_for_power(0.05, two_sided=True).seeds
    assert power_by_hand(unpaired.effect, m, 0.05, False, True) >= 0.8
    assert power_by_hand(unpaired.effect, m - 1, 0.05, False, True) < 0.8
    # a huge effect: never below what the exact test needs to reach the level at all
    huge = paired_difference([0.9, 0.95, 0.91], [0.1, 0.12, 0.11])
    assert huge.seeds_for_power(0.05).seeds == 5  # one-sided 1/32 <= 0.05
    assert huge.seeds_for_power(0.05, two_sided=True).seeds == 6


@settings(max_examples=300, deadline=None)
@given(
    effect=st.floats(1e-3, 1e6),
    alpha=st.sampled_from([0.05, 0.025, 0.05 / 6, 0.05 / 3 / 6]),
    paired=st.booleans(),
    two_sided=st.booleans(),
)
def test_power_never_fails_at_any_effect_and_never_asks_fewer_than_three_runs(
    effect, alpha, paired, two_sided
):
    # statsmodels' TTestPower().power returns NaN at d = 8.59 and n = 3 (scipy#17916)
    found = seeds_for_power(effect, alpha, paired, two_sided)
    assert 3 <= found.seeds <= 1001 and not found.approximate
    n = found.seeds
    reachable = seeds_to_reach(alpha / (2 if two_sided else 1), paired)
    if n <= 1000:
        assert power_by_hand(effect, n, alpha, paired, two_sided) >= 0.8
        assert smallest_p(n, n, paired) <= alpha / (2 if two_sided else 1)
    if n > max(3, reachable):  # the noncentral t decided it, not a floor
        assert power_by_hand(effect, n - 1, alpha, paired, two_sided) < 0.8


def test_a_nan_from_the_noncentral_t_gives_way_to_the_normal_approximation_and_says_so(
    monkeypatch,
):
    monkeypatch.setattr(statistics_module.stats.nct, "sf", lambda *args: float("nan"))
    power, approximate = t_power(1.0, 10, 0.05, paired=True, two_sided=False)
    assert approximate
    assert power == pytest.approx(stats.norm.sf(stats.t.isf(0.05, 9) - math.sqrt(10)))
    found = seeds_for_power(1.0, 0.05, paired=True)
    assert found.approximate
    assert found.text() == (
        f"{found.seeds} seeds per configuration for 80% power "
        "(normal approximation: the noncentral t gave no value)"
    )


def test_no_spread_is_no_interval_but_still_an_exact_test():
    # 0.61 - 0.51 and 0.51 - 0.41 differ by 1e-17 in floating point: the same difference
    flat = paired_difference([0.51, 0.61, 0.71], [0.41, 0.51, 0.61])
    assert flat.no_spread and (flat.low, flat.high, flat.effect) == (None, None, None)
    assert flat.estimate == pytest.approx(0.1)
    assert (flat.p_greater, flat.p_less) == (1 / 8, 1.0)  # every seed agrees on the sign
    same = paired_difference([0.5, 0.3, 0.2], [0.5, 0.3, 0.2])
    assert (same.p_greater, same.p_less) == (1.0, 1.0)  # every pair equal: nothing to tell
    # differences that are rounding alone (0.3 - 0.1 - 0.2) count as 0, not as signs
    rounding = paired_difference([0.3 - 0.1, 0.7 - 0.4, 0.9 - 0.6], [0.2, 0.3, 0.3])
    assert (rounding.p_greater, rounding.p_less) == (1.0, 1.0)
    assert unpaired_difference([0.5, 0.5, 0.5], [0.4, 0.4, 0.4]).no_spread


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
