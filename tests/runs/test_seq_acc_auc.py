"""The area under the val/seq_acc curve: the mean over the run's validations, so a run that
learned sooner scores higher though both end at 1.0."""

import pytest

from transformer_lab.runs.learning_curve import curve_metrics

FAST = [(9, 0.5), (19, 1.0), (29, 1.0), (39, 1.0)]
SLOW = [(9, 0.0), (19, 0.1), (29, 0.6), (39, 1.0)]


def test_the_area_is_the_mean_over_validations_and_tells_a_fast_learner_from_a_slow_one():
    fast, slow = curve_metrics(FAST, 0.9), curve_metrics(SLOW, 0.9)
    assert fast["val/seq_acc_best"] == slow["val/seq_acc_best"] == 1.0  # saturated
    assert fast["val/seq_acc_auc"] == pytest.approx(3.5 / 4)
    assert slow["val/seq_acc_auc"] == pytest.approx(1.7 / 4)
    assert (fast["val/steps_to_target"], slow["val/steps_to_target"]) == (19.0, 39.0)
    assert curve_metrics([], 0.9) == {}  # no validation: nothing to say
