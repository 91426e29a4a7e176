"""Comparing an accuracy with a threshold, exact at the boundary.

An accuracy is a count over a count (180 of 200 sequences: 0.9), but it reaches every
reader as float32: Lightning's logged tensor, TensorBoard's event and ``metrics.json``'s
copy of either. float32's 0.9 is 0.8999999762, so ``value >= 0.9`` would say that a run at
exactly 180/200 did not reach 0.9. Every comparison of a read-back accuracy with a
threshold (the stop at a target, the steps to a target, a run's outcome, the learning-rate
window) goes through :func:`reaches`, which allows :data:`TOLERANCE` below the threshold:
float32 rounds a value in [0, 1] by less than 6e-8, and two counts over as many as 100,000
examples differ by at least 1e-5, so the tolerance admits the count at the threshold and
none below it.
"""

TOLERANCE = 1e-6


def reaches(value: float, threshold: float) -> bool:
    """Whether the accuracy ``value`` (read back as float32) is at or above ``threshold``."""
    return value >= threshold - TOLERANCE
