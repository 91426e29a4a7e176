"""The area under the val/seq_acc curve: the mean over the run's validations, one per step,
so a run that learned sooner scores higher though both end at 1.0, and a resumed run scores
what it would have uninterrupted."""

import pytest
from torch.utils.tensorboard import SummaryWriter

from transformer_lab.runs.learning_curve import (
    CURVE_TAG,
    area_under_curve,
    curve_metrics,
    read_scalars,
)

FAST = [(9, 0.5), (19, 1.0), (29, 1.0), (39, 1.0)]
SLOW = [(9, 0.0), (19, 0.1), (29, 0.6), (39, 1.0)]


def test_the_area_is_the_mean_over_validations_and_tells_a_fast_learner_from_a_slow_one():
    fast, slow = curve_metrics(FAST, 0.9), curve_metrics(SLOW, 0.9)
    assert fast["val/seq_acc_best"] == slow["val/seq_acc_best"] == 1.0  # saturated
    assert fast["val/seq_acc_auc"] == pytest.approx(3.5 / 4)
    assert slow["val/seq_acc_auc"] == pytest.approx(1.7 / 4)
    assert (fast["val/steps_to_target"], slow["val/steps_to_target"]) == (19.0, 39.0)
    assert curve_metrics([], 0.9) == {}  # no validation: nothing to say


def test_a_step_logged_again_by_a_resumed_run_replaces_its_first_value(tmp_path):
    """A resume logs the steps after its checkpoint again, into a second events file of the
    run folder, later: each step is one point, its latest value, so the area is the
    uninterrupted run's (four validations, not five)."""
    first = SummaryWriter(str(tmp_path))
    for step, value in [(9, 0.25), (19, 0.5), (29, 0.125)]:  # killed after the step-29 point
        first.add_scalar(CURVE_TAG, value, step, walltime=1000.0 + step)
    first.close()
    resumed = SummaryWriter(str(tmp_path))  # from the step-19 checkpoint: step 29 again
    for step, value in [(29, 0.75), (39, 1.0)]:
        resumed.add_scalar(CURVE_TAG, value, step, walltime=2000.0 + step)
    resumed.close()
    points = read_scalars(tmp_path)[CURVE_TAG]
    assert points == [(9, 0.25), (19, 0.5), (29, 0.75), (39, 1.0)]
    assert curve_metrics(points, 0.9)["val/seq_acc_auc"] == 2.5 / 4
    assert area_under_curve([(9, 0.25), (29, 0.125), (29, 0.75)]) == 1.0 / 2
