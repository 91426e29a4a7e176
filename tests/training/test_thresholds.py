"""An accuracy read back as float32 is compared with a threshold exactly at the boundary:
180 of 200 reaches 0.9 (float32 holds it as 0.8999999762), 179 of 200 does not, in every
place that compares one."""

import numpy as np

from transformer_lab.callbacks.stop_at_target import StopAtTarget
from transformer_lab.runs.learning_curve import curve_metrics, steps_to_target
from transformer_lab.runs.outcome import OutcomeRule
from transformer_lab.training.thresholds import reaches

AT = float(np.float32(180 / 200))  # 0.8999999761581421, as TensorBoard and Lightning give it
BELOW = float(np.float32(179 / 200))


def test_180_of_200_reaches_0_9_and_179_of_200_does_not():
    assert AT < 0.9  # the flaw: a plain >= says no
    assert reaches(AT, 0.9)
    assert not reaches(BELOW, 0.9)
    # the finest count the tolerance still tells apart: 89,999 of 100,000
    assert not reaches(float(np.float32(89_999 / 100_000)), 0.9)


def test_steps_to_target_the_outcome_and_the_stop_count_the_boundary_as_reached():
    points = [(99, BELOW), (199, AT)]
    assert steps_to_target(points, 0.9) == 199
    assert curve_metrics(points, 0.9)["val/steps_to_target"] == 199.0
    assert OutcomeRule("val/seq_acc", 0.9).classify({"val/seq_acc": AT}) == "learned"
    assert OutcomeRule("val/seq_acc", 0.9).classify({"val/seq_acc": BELOW}) == "stalled"
    stop = StopAtTarget(target=0.9, validations=2)
    stop.seen = [(99, BELOW), (199, AT), (299, AT)]
    assert stop.streak == [(199, AT), (299, AT)]
