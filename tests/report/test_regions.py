"""A rule judged across cells of the grid: one rule per cell that runs both its values, all of
them one family, and the report's map of where the claim holds."""

import pytest
import yaml

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.report import main
from transformer_lab.report.proportions import boschloo_greater
from transformer_lab.report.regions import cell_mark
from transformer_lab.report.sweep import load_sweep
from transformer_lab.report.verdicts import judge_all, read_hypotheses
from transformer_lab.sweep.hypotheses import expand_across, parse_hypotheses

from .conftest import hand_made_job

RULE = """\
hypotheses:
  - id: warmup_helps
    claim: "Post-norm learns more often with a warmup."
    source: "a test"
    metric: outcome/learned
    key: recipe
    values: [warm, cold]
    predicted: A better
    across: [depth, optim.lr]
"""


def warm_alone_learns_at_6_and_low_lr(depth, lr, recipe, seed):
    return recipe == "warm" or (depth, lr) != (6, "0.001")


def make_sweep(folder, learns=warm_alone_learns_at_6_and_low_lr):
    """2 depths x 2 rates x 2 recipes x 4 seeds, each run learned where ``learns`` says: by
    default only at depth 6, lr 0.001 does warm learn (4/4) and cold not (0/4); elsewhere
    both learn in every seed."""
    for depth in (6, 12):
        for lr in ("0.001", "0.01"):
            for recipe in ("warm", "cold"):
                for seed in range(4):
                    learned = learns(depth, lr, recipe, seed)
                    overrides = {"depth": depth, "optim.lr": lr, "recipe": recipe, "seed": seed}
                    metrics = {"val/seq_acc": 1.0 if learned else 0.0}
                    metrics["outcome"] = "learned" if learned else "stalled"
                    job = hand_made_job(folder, overrides, metrics)
                    (job / ".hydra" / "config.yaml").write_text(RULE)
    return folder


def test_a_rule_across_two_keys_is_one_rule_per_cell_in_one_family(tmp_path):
    sweep = load_sweep(make_sweep(tmp_path))
    verdicts = judge_all(sweep, read_hypotheses(sweep))
    assert [v.hypothesis.id for v in verdicts] == [
        "warmup_helps[depth=6,optim.lr=0.001]",
        "warmup_helps[depth=6,optim.lr=0.01]",
        "warmup_helps[depth=12,optim.lr=0.001]",
        "warmup_helps[depth=12,optim.lr=0.01]",
    ]
    assert {v.family for v in verdicts} == {8}, "both directions of four cell rules"
    first, *others = verdicts
    assert first.p == pytest.approx(boschloo_greater(4, 4, 0, 4))
    assert first.adjusted == pytest.approx(8 * first.p) and first.word == "supported"
    assert all(v.p == 1.0 and v.word.startswith("inconclusive") for v in others)


def test_the_report_maps_where_the_claim_holds(tmp_path):
    folder = make_sweep(tmp_path)
    assert main([str(folder)]) == 0
    report = (folder / "report.md").read_text()
    assert "## Where each claim holds" in report
    assert "`warmup_helps`: Post-norm learns more often with a warmup." in report
    row = "| 6 | 0.001 | +1.000 [+0.307, +1.000] | learned 4/4 vs 0/4 | 0.00391 (0.0313) |"
    assert f"{row} supported |" in report
    assert "4 cells: 1 supported, 0 contradicted, 3 inconclusive" in report
    assert "`none learn` where neither side learned in any run" in report
    assert (folder / "region_warmup_helps.png").stat().st_size > 1000


def test_an_undecided_cell_says_whether_neither_side_learned_or_both_did(tmp_path):
    """The map must not draw a regime that trains neither recipe like one where the seeds
    were too few: at depth 12 nothing learns, at depth 6, lr 0.01 everything does, and at
    depth 6, lr 0.001 the sides differ by one seed."""

    def learns(depth, lr, recipe, seed):
        if depth == 12:
            return False
        return lr == "0.01" or recipe == "warm" or seed > 0

    sweep = load_sweep(make_sweep(tmp_path, learns))
    marks = {v.hypothesis.id: cell_mark(v) for v in judge_all(sweep, read_hypotheses(sweep))}
    assert marks == {
        "warmup_helps[depth=6,optim.lr=0.001]": "?",
        "warmup_helps[depth=6,optim.lr=0.01]": "all learn",
        "warmup_helps[depth=12,optim.lr=0.001]": "none learn",
        "warmup_helps[depth=12,optim.lr=0.01]": "none learn",
    }


def test_a_decided_cell_says_holds_whatever_its_counts(tmp_path):
    sweep = load_sweep(make_sweep(tmp_path))
    first, *_ = judge_all(sweep, read_hypotheses(sweep))
    assert first.word == "supported" and cell_mark(first) == "holds"


def test_a_cell_that_does_not_run_both_values_is_no_rule():
    jobs = [
        {"depth": "6", "recipe": "warm", "seed": "0"},
        {"depth": "6", "recipe": "cold", "seed": "0"},
        {"depth": "12", "recipe": "warm", "seed": "0"},
    ]
    rule = RULE.replace("[depth, optim.lr]", "[depth]").split("hypotheses:\n")[1]
    (template,) = parse_hypotheses(yaml.safe_load(rule))
    (cell,) = expand_across([template], jobs)
    assert cell.id == "warmup_helps[depth=6]" and cell.fixed == (("depth", "6"),)


@pytest.mark.parametrize(
    ("across", "reason"),
    [("[recipe]", "compared or held fixed already"), ("depth", "not a list of keys")],
)
def test_an_across_that_is_no_list_of_other_keys_is_refused_by_name(across, reason):
    rule = RULE.replace("[depth, optim.lr]", across).split("hypotheses:\n")[1]
    with pytest.raises(InvalidSetting, match=reason):
        parse_hypotheses(yaml.safe_load(rule))


def test_an_across_key_the_sweep_does_not_vary_is_refused_by_name():
    (template,) = parse_hypotheses(yaml.safe_load(RULE.split("hypotheses:\n")[1]))
    jobs = [{"recipe": r, "depth": "6", "optim.lr": "0.001"} for r in ("warm", "cold")]
    with pytest.raises(InvalidSetting, match="across='depth': the sweep does not vary it"):
        expand_across([template], jobs)


def test_rules_that_name_a_family_are_adjusted_within_it_only(tmp_path):
    """Two claims over the same four cells, each its own family: every cell rule is adjusted
    over the eight p-values of its claim, not the sixteen of the sweep."""
    second = RULE.split("hypotheses:\n")[1].replace("id: warmup_helps", "id: warmup_helps_too")
    both = RULE.replace(
        "    across: [depth, optim.lr]\n", "    across: [depth, optim.lr]\n    family: one\n"
    )
    both += second.replace(
        "    across: [depth, optim.lr]\n", "    across: [depth, optim.lr]\n    family: two\n"
    )
    make_sweep(tmp_path)
    for config in tmp_path.glob("*/.hydra/config.yaml"):
        config.write_text(both)
    sweep = load_sweep(tmp_path)
    verdicts = judge_all(sweep, read_hypotheses(sweep))
    assert len(verdicts) == 8 and {v.family for v in verdicts} == {8}
    firsts = [v for v in verdicts if "[depth=6,optim.lr=0.001]" in v.hypothesis.id]
    assert [v.adjusted for v in firsts] == pytest.approx([8 * firsts[0].p] * 2)
