"""An outcome at an earlier budget (``outcome.at_steps``): one run judged at step 400 and at
its end, from its own validations, and a rule on ``outcome/learned@400`` that counts the
runs that had learned by then, not by the end."""

import pytest
from omegaconf import OmegaConf

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.report.proportions import boschloo_greater
from transformer_lab.report.sweep import load_sweep
from transformer_lab.report.verdicts import judge_all, read_hypotheses
from transformer_lab.runs.outcome import OutcomeRule, budget_of, is_learned
from transformer_lab.sweep.hypotheses import check_outcome

from .conftest import hand_made_job

RULE = OutcomeRule(metric="val/seq_acc", threshold=0.5, at_steps=[400])


def test_a_budget_is_classified_from_the_validation_after_that_many_updates():
    """Validations after update n are logged at step n - 1 (runs/learning_curve.py)."""
    curve = [(99, 0.0), (199, 0.1), (299, 0.3), (399, 0.6), (499, 0.2), (799, 0.9)]
    assert RULE.classify_at(curve, None) == {"val/seq_acc@400": 0.6, "outcome@400": "learned"}
    assert RULE.classify_at([(399, 0.49)], None)["outcome@400"] == "stalled"
    assert RULE.classify_at(curve, diverged_at=350) == {"outcome@400": "diverged"}
    assert RULE.classify_at(curve, diverged_at=401)["outcome@400"] == "learned"
    assert RULE.classify_at([(299, 0.9)], None) == {}, "no validation at the budget: none"


@pytest.mark.parametrize("steps", [[0], [True], ["400"], 400])
def test_a_budget_that_is_no_step_is_refused_by_name(steps):
    with pytest.raises(InvalidSetting, match=r"outcome\.at_steps"):
        OutcomeRule(at_steps=steps)


@pytest.mark.parametrize(("steps", "allowed"), [([450], True), ([900], False), ([400], True)])
def test_a_budget_must_fall_on_a_validation_within_the_run(steps, allowed):
    cfg = OmegaConf.create(
        {
            "outcome": {"metric": "val/seq_acc", "threshold": 0.5, "at_steps": steps},
            "trainer": {"max_steps": 800, "val_check_interval": 100 if steps != [450] else 150},
            "data": {},
        }
    )
    if allowed:
        check_outcome(cfg)
    else:
        with pytest.raises(InvalidSetting, match=r"outcome\.at_steps=900: no validation there"):
            check_outcome(cfg)


def test_learned_rate_metrics_name_their_budget():
    assert budget_of("outcome/learned") is None and budget_of("outcome/learned@400") == 400
    assert is_learned("outcome/learned@400") and not is_learned("outcome/learned@soon")
    assert not is_learned("val/seq_acc")


HYPOTHESES = """\
hypotheses:
  - id: pre_learns_sooner
    claim: "By step 400 pre-norm has learned more often than post-norm."
    source: "a test"
    metric: outcome/learned@400
    key: model.norm
    values: [pre, post]
    predicted: A better
"""


def test_a_rule_at_a_budget_counts_the_runs_learned_by_then(tmp_path):
    """Both placements learn by the end of every run; by step 400 pre-norm had in 4 of 4
    seeds and post-norm in 0 of 4: Boschloo on 4/4 against 0/4, not on 4/4 against 4/4."""
    for norm, early in (("pre", "learned"), ("post", "stalled")):
        for seed in range(4):
            metrics = {"val/seq_acc": 1.0, "outcome": "learned", "outcome@400": early}
            job = hand_made_job(tmp_path, {"model.norm": norm, "seed": seed}, metrics)
            (job / ".hydra" / "config.yaml").write_text(HYPOTHESES)
    sweep = load_sweep(tmp_path)
    (verdict,) = judge_all(sweep, read_hypotheses(sweep))
    assert (verdict.comparison.difference.k_a, verdict.comparison.difference.k_b) == (4, 0)
    assert verdict.p == pytest.approx(boschloo_greater(4, 4, 0, 4))
