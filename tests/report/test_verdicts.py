"""Intervals, paired comparisons and verdicts in the report of a hand-made sweep whose numbers
are chosen: every interval is scipy.stats' to 1e-9, paired where the seeds match and Welch's
where they do not, every p-value scipy's exact permutation test's, steps to the target are
censored, and each hypothesis gets the verdict its numbers carry, at the top of report.md
and in the report's TensorBoard run."""

import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from transformer_lab.report import main
from transformer_lab.report.comparisons import compare
from transformer_lab.report.sweep import load_sweep
from transformer_lab.report.verdicts import judge_all, read_hypotheses

from .conftest import hand_made_job, scipy_p

# (norm, schedule) -> {seed: (val/seq_acc_auc, first step with val/seq_acc >= 0.9 or None)}
# Eight seeds where a rule is to be decided: the 4 rules' 8 one-sided tests ask 0.05 / 8 of
# the smallest p-value, and an exact sign-flip test of n pairs cannot go below 1 / 2^n.
AUC = {
    ("post", "constant"): {
        s: (v, None) for s, v in enumerate([0.40, 0.35, 0.44, 0.38, 0.41, 0.36, 0.43, 0.39])
    },
    ("pre", "constant"): dict(
        enumerate([(0.80, 199), (0.78, 299), (0.83, 199), (0.79, 199), (0.81, 299)])
    )
    | {5: (0.77, 199), 6: (0.82, 199), 7: (0.80, 299)},
    ("post", "linear_warmup"): {0: (0.60, 399), 1: (0.66, 499), 2: (0.70, 99)},
    ("pre", "linear_warmup"): dict(
        enumerate([(0.82, 199), (0.76, 199), (0.81, 299), (0.78, 199), (0.83, 299)])
    )
    | {5: (0.75, 199), 6: (0.80, 199), 7: (0.79, 199)},
    ("sandwich", "constant"): {0: (0.70, 199)},  # one run: no spread
    ("sandwich", "linear_warmup"): {3: (0.50, 199), 4: (0.58, None)},  # seeds of its own
}
DIVERGED = ("post", "linear_warmup", 2)  # reached 0.9 at step 99, then diverged at 150
CLIPPED = {
    "post": [0.90, 0.95, 0.85, 0.90, 0.92, 0.88, 0.91, 0.89],
    "pre": [0.10, 0.20, 0.15, 0.12, 0.18, 0.11, 0.14, 0.16],
    "sandwich": [0.5, 0.4],
}
CONFIG = "trainer:\n  max_steps: 600\n  gradient_clip_val: 1.0\n"

HYPOTHESES = """\
hypotheses:
  - id: pre_learns_faster
    claim: "Without warmup, pre-norm learns faster than post-norm."
    source: "Xiong et al. 2020, §3.2"
    metric: val/seq_acc_auc
    key: model/norm
    values: [pre, post]
    fixed: {optim.schedule: constant}
    predicted: A better
  - id: post_learns_faster
    claim: "Without warmup, post-norm learns faster than pre-norm."
    source: "nobody"
    metric: val/seq_acc_auc
    key: model.norm
    values: [pre, post]
    fixed: {optim.schedule: constant}
    predicted: B better
  - id: warmup_helps_pre
    claim: "Pre-norm learns faster with a warmup."
    source: "a guess"
    metric: val/seq_acc_auc
    key: optim.schedule
    values: [linear_warmup, constant]
    fixed: {model.norm: pre}
    predicted: A better
  - id: sandwich_beats_post
    claim: "Without warmup, sandwich-norm learns faster than post-norm."
    source: "a guess"
    metric: val/seq_acc_auc
    key: model.norm
    values: [sandwich, post]
    fixed: {optim.schedule: constant}
    predicted: A better
"""


def curve(reached: int | None) -> list[tuple[int, float]]:
    """A val/seq_acc curve validated every 100 steps: 0.5 until ``reached``, then 0.95."""
    return [(s, 0.95 if reached is not None and s >= reached else 0.5) for s in range(99, 600, 100)]


def make_sweep(folder, hypotheses: str = HYPOTHESES):
    for (norm, schedule), runs in AUC.items():
        for i, (seed, (auc, reached)) in enumerate(runs.items()):
            diverged = (norm, schedule, seed) == DIVERGED
            metrics = {
                "val/seq_acc_auc": auc,
                "val/loss": 1.0 - auc,
                "val/seq_acc": curve(reached)[-1][1],
                "train/clip_fraction": CLIPPED[norm][i],
                "diverged": diverged,
                "diverged_at_step": 150 if diverged else None,
            }
            overrides = {"model/norm": norm, "optim.schedule": schedule, "seed": seed}
            job = hand_made_job(folder, overrides, metrics, {"val/seq_acc": curve(reached)}, CONFIG)
            (job / ".hydra" / "config.yaml").write_text(hypotheses)
    return folder


@pytest.fixture
def report(tmp_path) -> str:
    assert main([str(make_sweep(tmp_path))]) == 0
    return (tmp_path / "report.md").read_text()


def table(text: str) -> tuple[list[str], list[list[str]]]:
    """The header and body rows of the first markdown table in ``text``, as cells."""
    lines = [line for line in text.split("\n\n| ", 1)[1].split("\n\n")[0].splitlines()]
    cells = [
        [c.strip() for c in line.strip("| ").split(" | ")] for line in ["| " + lines[0], *lines[1:]]
    ]
    return cells[0], cells[2:]


def section(report: str, title: str) -> str:
    return report.split(f"## {title}\n")[1].split("\n## ")[0]


def auc(norm: str, schedule: str, keep_diverged: bool = False) -> list[float]:
    return [
        value
        for seed, (value, _) in AUC[(norm, schedule)].items()
        if keep_diverged or (norm, schedule, seed) != DIVERGED
    ]


def interval(values: list[float]) -> str:
    """What the report should print for a fraction, computed here with scipy.stats alone:
    the t interval cut to [0, 1]."""
    mean = sum(values) / len(values)
    low, high = stats.t.interval(0.95, len(values) - 1, loc=mean, scale=stats.sem(values))
    return f"{mean:.3f} [{max(0, low):.3f}, {min(1, high):.3f}] n={len(values)}"


def test_each_cell_is_the_mean_and_its_t_interval_over_seeds(report):
    header, body = table(section(report, "Final metrics"))
    cells = {tuple(row[:2]): row[header.index("val/seq_acc_auc")] for row in body}
    assert cells[("post", "constant")] == interval(auc("post", "constant"))
    assert cells[("pre", "constant")] == interval(auc("pre", "constant"))
    # the diverged run is left out: two runs, n=2
    assert cells[("post", "linear_warmup")] == interval(auc("post", "linear_warmup"))
    assert cells[("post", "linear_warmup")] == "0.630 [0.249, 1.000] n=2"  # t's 1.011, cut
    assert cells[("sandwich", "constant")] == "0.700 n=1"
    header, body = table(section(report, "Training stability"))
    clipped = {tuple(row[:2]): row[header.index("train/clip_fraction")] for row in body}
    assert clipped[("post", "linear_warmup")] == interval(CLIPPED["post"][:3])  # diverged too


def test_steps_to_target_are_a_median_with_the_runs_that_never_reached_it_beyond_max_steps(
    report,
):
    _, body = table(section(report, "Final metrics"))
    steps = {tuple(row[:2]): row[-2] for row in body}
    assert steps[("pre", "constant")] == "199 (8/8)"  # all reached: five at 199, three at 299
    assert steps[("post", "constant")] == "> 600 (0/8)"  # none did
    assert steps[("sandwich", "linear_warmup")] == "> 399 (1/2)"  # half: (199 + >600) / 2
    # the diverged run counts as not reached, though it was at 0.9 by step 99
    assert steps[("post", "linear_warmup")] == "499 (2/3)"  # 399, 499, > 600


def test_a_comparison_pairs_by_seed_and_equals_scipys_paired_t_interval(tmp_path):
    sweep = load_sweep(make_sweep(tmp_path))
    found = compare(
        sweep, "val/seq_acc_auc", "model.norm", ("post", "pre"), [("optim.schedule", "constant")]
    )
    post, pre = auc("post", "constant"), auc("pre", "constant")
    ci = stats.ttest_rel(post, pre).confidence_interval(0.95)
    assert found.difference.paired and found.difference.n_a == 8
    assert found.difference.low == pytest.approx(ci.low, abs=1e-9)
    assert found.difference.high == pytest.approx(ci.high, abs=1e-9)
    # the exact sign-flip test: every seed has post below pre, 1 of 256 assignments
    assert found.difference.p_less == 1 / 256 == scipy_p(post, pre, "samples", "less")
    assert found.p_two_sided == 2 / 256
    assert found.word == "B better"  # post - pre < 0 and a higher AUC is better
    # the diverged seed 2 has no pair: seeds 0 and 1 only
    warm = compare(
        sweep,
        "val/seq_acc_auc",
        "model.norm",
        ("post", "pre"),
        [("optim.schedule", "linear_warmup")],
    )
    ci = stats.ttest_rel(auc("post", "linear_warmup"), auc("pre", "linear_warmup")[:2])
    assert warm.difference.paired and warm.difference.n_a == 2
    assert warm.difference.low == pytest.approx(ci.confidence_interval(0.95).low, abs=1e-9)
    # two pairs: no two-sided p below 1/2, so no word but "no difference detected"
    assert warm.word == "no difference detected"


def test_sides_that_ran_other_seeds_get_welchs_interval_and_the_permutation_test(tmp_path, report):
    sweep = load_sweep(tmp_path)
    found = compare(
        sweep,
        "val/seq_acc_auc",
        "model.norm",
        ("post", "sandwich"),
        [("optim.schedule", "linear_warmup")],
    )
    expected = stats.ttest_ind(
        auc("post", "linear_warmup"), auc("sandwich", "linear_warmup"), equal_var=False
    ).confidence_interval(0.95)
    assert not found.difference.paired
    assert found.difference.low == pytest.approx(expected.low, abs=1e-9)
    assert found.difference.high == pytest.approx(expected.high, abs=1e-9)
    sides = auc("post", "linear_warmup"), auc("sandwich", "linear_warmup")
    assert found.difference.p_greater == scipy_p(*sides, "independent", "greater")
    assert found.difference.test.arrangements == 6  # C(4, 2): the smallest p is 1/6
    _, body = table(section(report, "Paired comparisons").split("### `model.norm`")[1])
    [row] = [r for r in body if r[:4] == ["linear_warmup", "post", "sandwich", "val/seq_acc_auc"]]
    diff = found.difference
    assert row[4] == f"{diff.estimate:+.3f} [{expected.low:+.3f}, {expected.high:+.3f}]"
    # post's diverged run did not learn, beside two that did: the cell is two-valued
    assert row[5] == (
        "unpaired, 2 vs 2 runs; runs both learned and not: two-valued, see outcome/learned; "
        "diverged, left out: 1/3 vs 0/2"
    )
    assert row[6] == (
        "no difference detected (2 against 2 runs: the smallest one-sided p is 0.17, above 0.025)"
    )


def test_each_hypothesis_gets_its_verdict_with_its_numbers_at_the_top(tmp_path, report):
    verdicts = section(report, "Hypotheses")
    assert report.index("## Hypotheses") < report.index("## Final metrics")
    words = {
        line.split("`")[1]: line.split("**")[1]
        for line in verdicts.splitlines()
        if line.startswith("- **")
    }
    assert words == {
        "pre_learns_faster": "supported",
        "post_learns_faster": "contradicted",
        "warmup_helps_pre": "inconclusive",
        "sandwich_beats_post": "inconclusive (n=1)",
    }
    pre, post = auc("pre", "constant"), auc("post", "constant")
    ci = stats.ttest_rel(pre, post).confidence_interval(0.95)
    p = scipy_p(pre, post, "samples", "greater")  # 1/256: pre above post at every seed
    mean = sum(pre) / 8 - sum(post) / 8
    sweep = load_sweep(tmp_path)
    judged = judge_all(sweep, read_hypotheses(sweep))
    # one family of 8: both p-values of every rule, Holm-adjusted as statsmodels does
    family = [v.p for v in judged] + [v.p_other for v in judged]
    adjusted = multipletests(family, method="holm")[1]
    assert [v.adjusted for v in judged] == pytest.approx(adjusted[:4], abs=1e-12)
    assert [v.adjusted_other for v in judged] == pytest.approx(adjusted[4:], abs=1e-12)
    assert adjusted[0] == pytest.approx(8 * p)  # the smallest p of eight, times eight
    assert (
        "  `val/seq_acc_auc` by `model.norm` with optim.schedule=constant: "
        f"A = pre: {interval(pre)}; B = post: {interval(post)}; "
        f"A − B {mean:+.3f} [{ci.low:+.3f}, {ci.high:+.3f}] (paired, 8 seeds); "
        "exact sign-flip test (all 256 sign assignments): one-sided p = 0.0039 (other "
        "direction 1), Holm-adjusted 0.031 (1) of 8 tests against 0.05; predicted: A better."
    ) in verdicts
    # the comparisons row of the same pair says what the hypotheses made of it
    _, body = table(section(report, "Paired comparisons").split("### `model.norm`")[1])
    [row] = [r for r in body if r[:4] == ["constant", "post", "pre", "val/seq_acc_auc"]]
    assert row[6] == (
        "**B better**; hypothesis `pre_learns_faster`: supported; hypothesis "
        "`post_learns_faster`: contradicted"
    )
    # post_learns_faster is the same comparison the other way round: contradicted
    assert judged[1].p_other == p and judged[1].adjusted_other == pytest.approx(8 * p)
    inconclusive = judged[2]
    seeds = inconclusive.comparison.difference.seeds_for_power(0.05 / 8)
    assert inconclusive.seeds_for_power() == seeds
    assert f"; {seeds.text(' at this level')}; predicted: A better." in verdicts
    events = EventAccumulator(str(tmp_path / "report"), size_guidance={"tensors": 0})
    events.Reload()
    [text] = events.Tensors("report/tables/text_summary")
    tables = text.tensor_proto.string_val[0].decode()
    assert section(report, "Hypotheses") in tables
    assert section(report, "Paired comparisons") in tables


BAD = [
    (
        ("key: model/norm", "key: optim.lr"),
        "hypotheses.pre_learns_faster.key='optim.lr': the sweep does not vary it; allowed: "
        "model.norm, optim.schedule",
    ),
    (
        (
            "values: [pre, post]\n    fixed: {optim.schedule: constant}\n    predicted: A",
            "values: [pre, deepnorm]\n    fixed: {optim.schedule: constant}\n    predicted: A",
        ),
        "hypotheses.pre_learns_faster.values='deepnorm': the sweep does not run "
        "model.norm=deepnorm; allowed: post, pre, sandwich",
    ),
    (
        (
            "metric: val/seq_acc_auc\n    key: model/norm",
            "metric: test/seq_acc\n    key: model/norm",
        ),
        "hypotheses.pre_learns_faster.metric='test/seq_acc': no finished run reports it; "
        "allowed: train/clip_fraction, val/loss, val/seq_acc, val/seq_acc_auc",
    ),
    (
        ("predicted: A better\n  - id: post", "predicted: A worse\n  - id: post"),
        "hypotheses.pre_learns_faster.predicted='A worse': unknown; allowed: A better, B better "
        "or equivalent",
    ),
]


@pytest.mark.parametrize(("change", "message"), BAD, ids=["key", "value", "metric", "direction"])
def test_a_hypothesis_the_sweep_cannot_evaluate_gets_one_line_and_no_report(
    tmp_path, capsys, change, message
):
    make_sweep(tmp_path, HYPOTHESES.replace(*change, 1))
    (tmp_path / "report.md").write_text("the earlier report")
    assert main([str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"error: {message}\n"
    assert (tmp_path / "report.md").read_text() == "the earlier report"  # nothing lost
    assert not (tmp_path / "report").exists()


def test_a_sweep_of_one_seed_per_configuration_gets_no_verdict_but_inconclusive(tmp_path):
    for (norm, schedule), runs in AUC.items():
        value, reached = next(iter(runs.values()))
        metrics = {"val/seq_acc_auc": value, "val/loss": 1.0 - value, "diverged": False}
        overrides = {"model/norm": norm, "optim.schedule": schedule, "seed": 0}
        job = hand_made_job(tmp_path, overrides, metrics, {"val/seq_acc": curve(reached)}, CONFIG)
        (job / ".hydra" / "config.yaml").write_text(HYPOTHESES)
    assert main([str(tmp_path)]) == 0
    report = (tmp_path / "report.md").read_text()
    verdicts = [line for line in section(report, "Hypotheses").splitlines() if line[:3] == "- *"]
    assert [line.split("**")[1] for line in verdicts] == ["inconclusive (n=1)"] * 4
    assert section(report, "Paired comparisons").strip() == (
        "Every configuration ran once: no difference has a spread to be judged by (n=1). Run "
        "each with several `seed` values (`seed=0,1,2`) to compare them."
    )
