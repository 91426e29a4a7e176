"""A rule is fixed before its runs: the sweep records the fingerprint of its hypotheses,
outcome rule and sequential design when it starts (a continued sweep keeps its first), and
the report judges as exploratory, saying so, a sweep whose jobs ran another rule."""

import json
from dataclasses import asdict

import pytest
import yaml
from omegaconf import OmegaConf

from transformer_lab.report import main
from transformer_lab.runs.outcome import OutcomeRule
from transformer_lab.runs.sweep_record import SweepRecord
from transformer_lab.sweep.hypotheses import parse_hypotheses, rule_hash
from transformer_lab.sweep.sequential import SequentialDesign

from .test_equivalence import CLOSE, RULE, make_sweep

RULE_ITEMS = yaml.safe_load(RULE)["hypotheses"]


def test_one_rule_spelt_two_ways_is_one_fingerprint_and_any_change_another():
    rule = rule_hash(parse_hypotheses(RULE_ITEMS), OutcomeRule())
    spelt = [RULE_ITEMS[0] | {"key": "recipe", "values": ["pre_no_warmup", "post_warmup"]}]
    assert rule_hash(parse_hypotheses(spelt), OutcomeRule()) == rule
    wider = [RULE_ITEMS[0] | {"margin": 0.1}]
    assert rule_hash(parse_hypotheses(wider), OutcomeRule()) != rule
    assert rule_hash(parse_hypotheses(RULE_ITEMS), OutcomeRule(threshold=0.9)) != rule
    design = asdict(SequentialDesign(first=4, budget=16))
    assert rule_hash(parse_hypotheses(RULE_ITEMS), OutcomeRule(), design) != rule


def record_rule(folder) -> None:
    """sweep.json as the sweep's start writes it, with the rule of RULE."""
    rule = rule_hash(parse_hypotheses(RULE_ITEMS), OutcomeRule())
    SweepRecord(("python",), ("train",), frozenset({"recipe", "seed"}), rule).write(folder)


@pytest.fixture
def sweep(tmp_path):
    make_sweep(tmp_path, CLOSE)
    return tmp_path


def test_a_sweep_judged_by_the_rule_it_started_with_is_confirmatory(sweep):
    record_rule(sweep)
    assert main([str(sweep)]) == 0
    report = (sweep / "report.md").read_text()
    assert "- **supported** `comparable`" in report
    assert "exploratory" not in report and "recorded no rule" not in report


def test_a_rule_edited_after_the_runs_makes_every_verdict_exploratory(sweep):
    record_rule(sweep)
    for path in sorted(sweep.glob("*/.hydra/config.yaml")):  # widened after seeing the runs
        config = OmegaConf.load(path)
        config.hypotheses[0].margin = 0.2
        OmegaConf.save(config, path)
    assert main([str(sweep)]) == 0
    report = (sweep / "report.md").read_text()
    assert "**Rule changed after the runs: judged as exploratory.**" in report
    assert (
        "of 16 of the 16 jobs (`recipe=post_warmup,seed=0`, `recipe=post_warmup,seed=1`, "
        "`recipe=post_warmup,seed=2` and 13 more) differ from those the sweep started with"
    ) in report
    assert "- **supported** (exploratory) `comparable`" in report


def test_a_sweep_that_recorded_no_rule_says_the_rule_cannot_be_checked(sweep):
    SweepRecord(("python",), ("train",), frozenset({"recipe", "seed"})).write(sweep)
    assert main([str(sweep)]) == 0
    report = (sweep / "report.md").read_text()
    assert "This sweep recorded no rule when it started" in report
    assert "- **supported** `comparable`" in report  # not downgraded: only not checked


def test_a_damaged_sequential_record_is_one_line(sweep, capsys):
    (sweep / "sequential.json").write_text('{"first": 4')
    assert main([str(sweep)]) == 2
    assert capsys.readouterr().err == (
        f"error: {sweep / 'sequential.json'} is damaged (JSONDecodeError): the sweep's looks "
        "and their levels are unknown; allowed: the file the sweeper wrote (the same command "
        "writes it again when it continues the sweep)\n"
    )
    assert json.loads((sweep / "sequential.json").read_text() + "}") == {"first": 4}
    assert not (sweep / "report.md").exists()
