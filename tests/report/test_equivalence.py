"""A hypothesis that predicts ``equivalent`` within a margin is judged by two one-sided exact
tests (TOST), each scipy's permutation test of the differences shifted by the margin:
``supported`` when both bounds are excluded, ``contradicted`` when the difference lies
beyond the margin, ``inconclusive`` otherwise; a difference merely "not detected" is never
read as equivalence. Its margin is checked before any run."""

import pytest

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.report import main
from transformer_lab.report.sweep import load_sweep
from transformer_lab.report.verdicts import judge_all, read_hypotheses, verdict_lines
from transformer_lab.sweep.hypotheses import parse_hypotheses

from .conftest import hand_made_job, scipy_p

RULE = """\
hypotheses:
  - id: comparable
    claim: "Pre-norm without warmup reaches results comparable to post-norm with it."
    source: "Xiong et al. 2020, abstract"
    metric: val/seq_acc
    key: recipe
    values: [pre_no_warmup, post_warmup]
    predicted: equivalent
    margin: 0.05
"""
POST = [0.91, 0.88, 0.93, 0.90, 0.87, 0.92, 0.89, 0.94]
CLOSE = [0.92, 0.87, 0.93, 0.91, 0.86, 0.92, 0.90, 0.93]  # within 0.01 of POST, seed by seed
FAR = [p - 0.2 for p in POST]  # 0.2 below at every seed: beyond the margin
MIXED = [0.99, 0.80, 0.97, 0.83, 0.95, 0.85, 0.96, 0.82]  # +-0.08: neither


def make_sweep(folder, pre: list[float], rule: str = RULE):
    for recipe, values in (("pre_no_warmup", pre), ("post_warmup", POST)):
        for seed, value in enumerate(values):
            metrics = {"val/seq_acc": value, "diverged": False}
            job = hand_made_job(folder, {"recipe": recipe, "seed": seed}, metrics)
            (job / ".hydra" / "config.yaml").write_text(rule)
    return load_sweep(folder)


def test_differences_well_inside_the_margin_are_supported_by_both_one_sided_tests(tmp_path):
    [verdict] = judge_all(sweep := make_sweep(tmp_path, CLOSE), read_hypotheses(sweep))
    # TOST: A - B above -0.05 and below +0.05, each the sign-flip test of the shifted pairs
    above = scipy_p([a + 0.05 for a in CLOSE], POST, "samples", "greater")
    below = scipy_p([a - 0.05 for a in CLOSE], POST, "samples", "less")
    assert verdict.p == max(above, below) == 1 / 256  # every pair inside, on both sides
    assert verdict.adjusted == pytest.approx(2 / 256)  # Holm over the rule's two tests
    assert verdict.word == "supported"
    assert main([str(tmp_path)]) == 0
    report = (tmp_path / "report.md").read_text()
    assert (
        "TOST within ±0.05 by two one-sided exact sign-flip tests (all 256 sign assignments): "
        "p = 0.0039 (beyond the margin 1), Holm-adjusted 0.0078 (1) of 2 tests against 0.05; "
        "predicted: equivalent within ±0.05."
    ) in report
    assert "- **supported** `comparable`" in report


def test_a_difference_beyond_the_margin_contradicts_the_equivalence(tmp_path):
    [verdict] = judge_all(sweep := make_sweep(tmp_path, FAR), read_hypotheses(sweep))
    beyond_below = scipy_p([a + 0.05 for a in FAR], POST, "samples", "less")
    assert verdict.p_other == 2 * beyond_below == 2 / 256  # either side: Bonferroni's 2
    assert verdict.word == "contradicted"


def test_an_undetected_difference_is_no_evidence_of_equivalence(tmp_path):
    [verdict] = judge_all(sweep := make_sweep(tmp_path, MIXED), read_hypotheses(sweep))
    assert abs(verdict.comparison.difference.estimate) < 0.01  # no difference to speak of
    assert verdict.word == "inconclusive"  # but the pairs scatter by 0.08: not within 0.05
    assert verdict.seeds_for_power() is not None
    # three pairs could never show it, whatever they were
    three = judge_all(make_sweep(tmp_path / "three", CLOSE[:3]), read_hypotheses(sweep))
    assert three[0].word == "inconclusive (too few seeds)"  # 1/8 against Holm's 0.025


def test_pairs_beyond_the_margin_too_few_for_its_doubled_test_say_so(tmp_path):
    """multi30k_warmup's pre_comparable: 8 pairs all beyond the margin, Holm's first step
    0.025 / 4. The test of a difference beyond the margin doubles its p (either side), so
    8 pairs give at least 2/256, above 0.00625: they could never contradict the rule, and
    the report says so and how many seeds could, not a bare "inconclusive"."""
    sweep = make_sweep(tmp_path, FAR)
    [verdict] = judge_all(sweep, read_hypotheses(sweep), level=0.0125)  # first step 0.00625
    assert verdict.p_other == 2 / 256 > verdict.first_step == 0.00625
    assert verdict.word == "inconclusive (too few seeds)"
    assert verdict.out_of_reach == (
        "8 pairs, beyond the margin: the smallest p of a difference beyond it is 0.0078"
    )
    assert "9 seeds could" in "\n".join(verdict_lines(verdict))  # 2/512 <= 0.00625
    # within the margin the same 8 pairs can decide it: TOST's p is not doubled
    [close] = judge_all(make_sweep(tmp_path / "close", CLOSE), read_hypotheses(sweep), 0.0125)
    assert close.out_of_reach is None and close.word == "supported"


BASE = {
    "id": "h",
    "claim": "c",
    "source": "s",
    "metric": "val/seq_acc",
    "key": "recipe",
    "values": ["a", "b"],
    "predicted": "equivalent",
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({}, "hypotheses.h.margin=None: an equivalence needs its margin; allowed: a number > 0"),
        ({"margin": 0}, "hypotheses.h.margin=0: out of range; allowed: a number > 0"),
        (
            {"predicted": "A better", "margin": 0.1},
            "hypotheses.h.margin=0.1: a margin belongs to predicted: equivalent; allowed: null",
        ),
        (
            {"metric": "outcome/learned", "margin": 0.1},
            "hypotheses.h.predicted='equivalent': no exact test of a margin on counts of runs; "
            "allowed: a continuous metric (val/seq_acc, val/seq_acc_auc, val/loss, ...)",
        ),
    ],
    ids=["no margin", "zero margin", "margin on a direction", "counts"],
)
def test_a_margin_is_checked_with_the_rule(change, message):
    with pytest.raises(InvalidSetting) as refused:
        parse_hypotheses([BASE | change])
    assert str(refused.value) == message
