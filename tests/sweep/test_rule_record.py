"""The sweep records the fingerprint of the rule it is judged by when it starts, and a
sweep continued into its folder keeps the first start's (tests/report/test_rule.py: the
report's side)."""

from dataclasses import asdict

from transformer_lab.runs.outcome import OutcomeRule
from transformer_lab.runs.sweep_record import SweepRecord
from transformer_lab.sweep.hypotheses import parse_hypotheses, rule_hash
from transformer_lab.sweep.record import RecordSweep
from transformer_lab.sweep.sequential import SequentialDesign


def test_the_sweep_records_its_rule_when_it_starts_and_a_continued_one_keeps_its_first(
    sweep_config, tmp_path
):
    config = sweep_config(["experiment=warmup", f"hydra.sweep.dir={tmp_path}"])
    RecordSweep().on_multirun_start(config)
    expected = rule_hash(
        parse_hypotheses(config.hypotheses),
        OutcomeRule.of_config(config),
        asdict(SequentialDesign.of_sweeper(config.hydra.sweeper)),
    )
    assert SweepRecord.read(tmp_path).rule == expected
    changed = ["hypotheses.0.predicted=B better", f"hydra.sweep.dir={tmp_path}"]
    RecordSweep().on_multirun_start(sweep_config(["experiment=warmup", *changed]))
    assert SweepRecord.read(tmp_path).rule == expected  # the rule before the first runs
