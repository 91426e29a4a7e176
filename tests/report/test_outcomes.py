"""Outcomes in the report of a hand-made sweep whose numbers are chosen: every run is
counted (a diverged run did not learn), a rate's interval is Clopper–Pearson's, two rates
are compared by Boschloo's exact test (scipy's to 1e-12) and Newcombe's interval
(statsmodels'), a continuous metric with diverged runs is judged only where the rule
scores them, and a sweep's hypotheses share Holm's correction (statsmodels')."""

import logging
import math

import pytest
from scipy import stats
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_effectsize

from transformer_lab.report import main
from transformer_lab.report.comparisons import compare, pairing_cell
from transformer_lab.report.family import holm
from transformer_lab.report.proportions import RateDifference, boschloo_greater, rate_interval
from transformer_lab.report.sweep import load_sweep
from transformer_lab.report.verdicts import judge_all, read_hypotheses

from .conftest import hand_made_job, scipy_p

# warmup steps -> [(val/seq_acc, val/seq_acc_auc, diverged) per seed]
RUNS = {
    0: [(0.0, 0.0, False)] * 4 + [(0.0, 0.05, True)] * 2,  # stalled 4, diverged 2: 0/6
    100: [(0.95, 0.6), (0.99, 0.7), (1.0, 0.65), (0.97, 0.72), (0.9, 0.58)],  # 5/5
}
HYPOTHESES = """\
hypotheses:
  - id: learns_with_warmup
    claim: "Post-norm learns with a warmup and stalls without one."
    source: "Xiong et al. 2020"
    metric: outcome/learned
    key: optim.warmup_steps
    values: [100, 0]
    predicted: A better
  - id: auc_unscored
    claim: "Post-norm learns sooner with a warmup."
    source: "a guess"
    metric: val/seq_acc_auc
    key: optim.warmup_steps
    values: [100, 0]
    predicted: A better
  - id: auc_scored
    claim: "Post-norm learns sooner with a warmup, a diverged run scoring 0."
    source: "a guess"
    metric: val/seq_acc_auc
    key: optim.warmup_steps
    values: [100, 0]
    predicted: A better
    diverged_value: 0.0
"""


def make_sweep(folder, hypotheses=HYPOTHESES):
    for warmup, runs in RUNS.items():
        for seed, (acc, auc, *diverged) in enumerate(runs):
            diverged = bool(diverged and diverged[0])
            metrics = {
                "val/seq_acc": acc,
                "val/seq_acc_auc": auc,
                "val/loss": 2.0 - acc,
                "diverged": diverged,
                "diverged_at_step": 40 if diverged else None,
            }
            overrides = {"optim.warmup_steps": warmup, "seed": seed}
            job = hand_made_job(folder, overrides, metrics, config="trainer:\n  max_steps: 600\n")
            (job / ".hydra" / "config.yaml").write_text(hypotheses)
    return folder


def test_the_learned_column_counts_every_run_with_an_exact_interval(tmp_path):
    assert main([str(make_sweep(tmp_path))]) == 0
    table = (tmp_path / "report.md").read_text().split("## Final metrics")[1].split("\n## ")[0]
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ") for line in table.splitlines()}
    never = rate_interval(0, 6)
    assert never == pytest.approx((0.0, 1 - 0.025 ** (1 / 6)), abs=1e-12)  # exact at k = 0
    assert rows["0"][2] == f"0/6 [0.000, {never[1]:.3f}]"  # the two diverged runs counted
    assert rows["100"][2] == f"5/5 [{0.025 ** (1 / 5):.3f}, 1.000]"
    assert rows["0"][3].startswith("**2/6**")


def test_outcome_rates_are_compared_by_boschloos_exact_test(tmp_path):
    sweep = load_sweep(make_sweep(tmp_path))
    verdicts = judge_all(sweep, read_hypotheses(sweep))
    learned = verdicts[0]
    assert isinstance(learned.comparison.difference, RateDifference)
    expected = stats.boschloo_exact([[5, 0], [0, 6]], alternative="greater").pvalue
    assert learned.p == pytest.approx(expected, abs=1e-12)  # 0.0005: the pilot's numbers
    assert learned.p_other == pytest.approx(1.0, abs=1e-12)
    assert learned.word == "supported"


def test_a_continuous_metric_with_diverged_runs_is_judged_only_where_the_rule_scores_them(
    tmp_path,
):
    sweep = load_sweep(make_sweep(tmp_path))
    _, unscored, scored = judge_all(sweep, read_hypotheses(sweep))
    assert unscored.word == "inconclusive (2 diverged runs without a value; set diverged_value)"
    assert unscored.p == 1.0  # still one of the family: Holm counts three
    # scored 0, the diverged runs pair with warmup 100's seeds 4 and 5 (seed 5 has none)
    values = [0.0, 0.0, 0.0, 0.0, 0.0]  # seeds 0-4 without warmup: 0, 0, 0, 0, diverged 0
    with_warmup = [auc for _, auc in RUNS[100]]
    p = scipy_p(with_warmup, values, "samples", "greater")
    assert scored.p == pytest.approx(p, abs=1e-12) and p == 1 / 32  # 5 pairs, all above
    assert scored.comparison.difference.n_a == 5


def test_the_family_is_corrected_together_and_printed_raw_and_adjusted(tmp_path):
    assert main([str(make_sweep(tmp_path))]) == 0
    report = (tmp_path / "report.md").read_text()
    sweep = load_sweep(tmp_path)
    verdicts = judge_all(sweep, read_hypotheses(sweep))
    # one family: every rule's p for supported and its p for contradicted
    adjusted = holm([v.p for v in verdicts] + [v.p_other for v in verdicts])
    assert [v.adjusted for v in verdicts] == pytest.approx(adjusted[:3])
    assert [v.adjusted_other for v in verdicts] == pytest.approx(adjusted[3:])
    learned = verdicts[0]
    assert learned.family == 6 and adjusted[0] == pytest.approx(6 * learned.p)
    assert (
        f"Boschloo's exact test: one-sided p = {learned.p:.2g} (other direction 1), "
        f"Holm-adjusted {adjusted[0]:.2g} (1) of 6 tests against 0.05"
    ) in report
    assert "- **supported** `learns_with_warmup`" in report
    assert "A = 100: 5/5 [" in report and "B = 0: 0/6 [" in report


def test_fewer_than_three_runs_a_side_get_no_verdict(tmp_path):
    RUNS_TWO = {0: RUNS[0][:2], 100: RUNS[100][:2]}
    for warmup, runs in RUNS_TWO.items():
        for seed, (acc, auc, *_) in enumerate(runs):
            metrics = {"val/seq_acc": acc, "val/seq_acc_auc": auc, "diverged": False}
            job = hand_made_job(tmp_path, {"optim.warmup_steps": warmup, "seed": seed}, metrics)
            (job / ".hydra" / "config.yaml").write_text(HYPOTHESES)
    sweep = load_sweep(tmp_path)
    words = [v.word for v in judge_all(sweep, read_hypotheses(sweep))]
    assert words == ["inconclusive (n=2)"] * 3


def test_a_difference_of_accuracies_stays_inside_minus_1_and_1(tmp_path):
    sweep = load_sweep(make_sweep(tmp_path))
    found = compare(sweep, "val/seq_acc", "optim.warmup_steps", ("0", "100"), [])
    t_low = found.difference.low  # the paired t interval of -0.95, -0.99, -1.0, -0.97
    assert t_low < -1.0
    assert found.interval == (-1.0, pytest.approx(found.difference.high))
    # four pairs: an exact test's two-sided p cannot go below 2/16, so no word, and why
    assert found.word == "no difference detected"
    assert found.out_of_reach(0.025) == "4 pairs: the smallest one-sided p is 0.062"


def test_a_continuous_comparison_of_runs_that_learned_and_stalled_says_it_is_two_valued(
    tmp_path,
):
    # without warmup 1 of 3 learns: its val/seq_acc is 0, 0 or 0.98, no normal sample
    mixed = {0: [0.0, 0.0, 0.98], 100: [0.95, 0.97, 0.99]}
    for warmup, values in mixed.items():
        for seed, acc in enumerate(values):
            metrics = {"val/seq_acc": acc, "diverged": False}
            hand_made_job(tmp_path, {"optim.warmup_steps": warmup, "seed": seed}, metrics)
    sweep = load_sweep(tmp_path)
    found = compare(sweep, "val/seq_acc", "optim.warmup_steps", ("0", "100"), [])
    assert found.two_valued
    assert (
        pairing_cell(found)
        == "paired, 3 seeds; runs both learned and not: two-valued, see outcome/learned"
    )
    counts = compare(sweep, "outcome/learned", "optim.warmup_steps", ("0", "100"), [])
    assert not counts.two_valued and pairing_cell(counts) == "learned 1/3 vs 3/3"


@pytest.mark.parametrize(("k_a", "n_a", "k_b", "n_b"), [(5, 5, 0, 6), (1, 3, 3, 3), (2, 4, 1, 4)])
def test_newcombes_interval_and_the_power_of_two_rates_are_statsmodels(k_a, n_a, k_b, n_b):
    found = RateDifference(k_a, n_a, k_b, n_b)
    newcombe = confint_proportions_2indep(k_a, n_a, k_b, n_b, method="newcomb")
    assert found.interval == pytest.approx(newcombe, abs=1e-15)
    h = abs(proportion_effectsize(k_a / n_a, k_b / n_b))
    for alpha, two_sided in ((0.05, True), (0.05 / 6, False)):
        solved = NormalIndPower().solve_power(
            h, None, alpha, 0.8, alternative="two-sided" if two_sided else "larger"
        )
        floor = found.seeds_to_reach(alpha / (2 if two_sided else 1))  # n/n against 0/n
        # statsmodels' solver gives NaN for 5/5 against 0/6 (h = pi): the floor answers
        by_power = math.ceil(solved) if math.isfinite(solved) else 0
        assert found.seeds_for_power(alpha, two_sided).seeds == max(3, floor, by_power)


def test_boschloo_can_reach_a_level_from_the_runs_at_which_n_of_n_against_0_of_n_does():
    # Boschloo's p of n/n against 0/n is 4^-n: 3 runs reach 0.016, 4 reach 0.0039
    assert [boschloo_greater(n, n, 0, n) for n in (3, 4)] == pytest.approx([1 / 64, 1 / 256])
    assert RateDifference.seeds_to_reach(0.025) == 3
    assert RateDifference.seeds_to_reach(0.05 / 3 / 4) == 4  # warmup's first look, 2 rules
    assert RateDifference(4, 4, 0, 4).smallest_p == pytest.approx(1 / 256)


def test_boschloos_test_keeps_scipys_optimiser_lines_off_a_sweeps_log(caplog):
    """scipy's shgo logs its bounds on the root logger at every call; at a Hydra sweep's INFO
    level that was a line per comparison at every look. The p-value is scipy's still."""
    table = [[3, 1], [4, 5]]  # 3/7 against 1/6: a table no other test caches
    with caplog.at_level(logging.INFO):
        expected = stats.boschloo_exact(table, alternative="greater").pvalue
        from_scipy = [r for r in caplog.records if r.pathname.endswith("_shgo.py")]
        caplog.clear()
        p = boschloo_greater(3, 7, 1, 6)
        logging.getLogger().info("a line of the sweep's own")
    assert from_scipy, "scipy no longer logs its bounds: the filter can go"
    assert p == pytest.approx(expected, abs=1e-12)
    assert [r.getMessage() for r in caplog.records] == ["a line of the sweep's own"]
