"""A hypothesis may compare the test stages' oracle-length accuracy (decoding forced to the
target's length), which only the test stages report, test_long's only with that split."""

import pytest
from omegaconf import OmegaConf

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.sweep.hypotheses import parse_hypotheses, reported_by

RULE = {
    "id": "alibi_extrapolates",
    "claim": "ALiBi gets more words right past the training lengths.",
    "source": "Press et al. 2022, §2",
    "key": "model.pos_encoding",
    "values": ["alibi", "sinusoidal"],
    "predicted": "A better",
}


@pytest.mark.parametrize("metric", ["test_long/oracle_token_acc", "test/oracle_seq_acc"])
def test_a_rule_may_compare_an_oracle_length_metric_of_a_test_stage(metric):
    (hypothesis,) = parse_hypotheses([{**RULE, "metric": metric}])
    assert hypothesis.metric == metric


def test_validation_has_no_oracle_length_metric():
    with pytest.raises(InvalidSetting, match=r"hypotheses\.alibi_extrapolates\.metric"):
        parse_hypotheses([{**RULE, "metric": "val/oracle_token_acc"}])


def test_only_a_run_with_a_test_long_split_reports_test_longs_oracle_metrics():
    without = reported_by(OmegaConf.create({"data": {"test_long_size": 0}}))
    with_long = reported_by(OmegaConf.create({"data": {"test_long_size": 100}}))
    assert "test/oracle_token_acc" in without and "test_long/oracle_token_acc" not in without
    assert {"test_long/oracle_token_acc", "test_long/oracle_seq_acc"} <= with_long
