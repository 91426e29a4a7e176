"""What a run's ``val/seq_acc`` curve says beyond its last point: the best value, the first
step at which it reached a target, and the area under the curve. One definition, shared by
the run's own HPARAMS entry and ``metrics.json`` and by the sweep report, all reading
TensorBoard's scalars.

The area, ``val/seq_acc_auc``, is the mean of ``val/seq_acc`` over the run's validations:
in [0, 1], and higher for a run that learned sooner, where the final value saturates (two
runs that both end at 1.0 score 1.0 there). Runs validated at the same steps (a sweep's
jobs, whose ``val_check_interval`` and ``max_steps`` are shared) are compared on the same
grid; the mean of the points is their area under the step curve divided by its length.

The step convention, the one every validation of a run follows: the validation after
update n is logged at step n - 1 (Lightning's logging step counts the updates before the
batch). The closing validation is no exception, since it runs inside the fit at the final
step (``Seq2SeqLitModule.on_train_batch_end``): a 25-step run with ``val_check_interval``
10 logs ``val/*`` at steps 9, 19 and 24, and ``val/steps_to_target`` is such a step.

A curve is keyed by step: a resumed run logs again the steps between its checkpoint and
the point where its first start was stopped (into a second events file of the same
folder), and the later value of a step replaces the earlier one, never adds a point, so
the area of a resumed run is the uninterrupted run's.
"""

from pathlib import Path

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from transformer_lab.training.thresholds import reaches

CURVE_TAG = "val/seq_acc"
# keep every scalar, skip the payloads nobody here reads
_SIZE_GUIDANCE = {"scalars": 0, "images": 1, "tensors": 1, "histograms": 1, "audio": 1}

Points = list[tuple[int, float]]  # [(step, value), ...] in step order, one per step


def by_step(events) -> Points:
    """One point per step, the latest written (by wall time) where a step was logged more
    than once, in step order. ``events``: TensorBoard's scalar events."""
    latest = {e.step: e.value for e in sorted(events, key=lambda e: e.wall_time)}
    return sorted(latest.items())


def read_scalars(folder: Path) -> dict[str, Points]:
    """Every TensorBoard scalar tag of the run in ``folder``, keyed by step."""
    events = EventAccumulator(str(folder), size_guidance=_SIZE_GUIDANCE)
    events.Reload()
    return {tag: by_step(events.Scalars(tag)) for tag in events.Tags()["scalars"]}


def steps_to_target(points: Points, target: float) -> int | None:
    """The step of the first point at or above ``target``; None if none reached it."""
    return next((step for step, value in points if reaches(value, target)), None)


def area_under_curve(points: Points) -> float:
    """The mean value over the curve's validations, one per step (a step given twice
    counts once: its later value, as :func:`by_step` keeps it)."""
    latest = dict(points)
    return sum(latest.values()) / len(latest)


def curve_metrics(points: Points, target: float) -> dict[str, float]:
    """``val/seq_acc_best``, ``val/seq_acc_auc`` and, once reached, ``val/steps_to_target``."""
    if not points:
        return {}
    metrics = {
        f"{CURVE_TAG}_best": max(value for _, value in points),
        f"{CURVE_TAG}_auc": area_under_curve(points),
    }
    reached = steps_to_target(points, target)
    if reached is not None:
        metrics["val/steps_to_target"] = float(reached)
    return metrics
