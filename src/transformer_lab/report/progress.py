"""How far a run got, as the report's steps column and learning-rate window read it: one
accuracy, its final value, and the first validation at which it reached a target.

On the synthetic tasks that accuracy is ``val/seq_acc`` and the target 0.9: a run that
gets nine sequences in ten exactly right has learned the task. On real text it would say
nothing, since a translation rarely matches its one reference word for word, so every run
would read "never reached 0.9" and every learning rate would tie at about 0. A sweep
whose outcome rule names another accuracy (``outcome.metric``: ``experiment=multi30k_warmup``
judges ``val/token_acc >= 0.5``) is therefore read by that accuracy at that rule's
threshold; ``--metric`` and ``--target`` choose either by hand.
"""

from dataclasses import dataclass

from transformer_lab.config.validation import InvalidSetting, check_number
from transformer_lab.runs import learning_curve
from transformer_lab.runs.outcome import OutcomeRule
from transformer_lab.runs.reader import Run

SEQUENCE_ACCURACY = "val/seq_acc"
SEQUENCE_TARGET = 0.9
CURVES = (SEQUENCE_ACCURACY, "val/token_acc")  # the accuracies every validation logs


@dataclass(frozen=True)
class Progress:
    metric: str  # a validation accuracy (:data:`CURVES`)
    target: float  # in [0, 1]

    def __post_init__(self):
        if self.metric not in CURVES:
            allowed = " or ".join(CURVES)
            raise InvalidSetting("--metric", self.metric, "not a validation accuracy", allowed)
        check_number("--target", self.target, minimum=0, maximum=1)

    @property
    def label(self) -> str:
        return f"{self.metric} ≥ {self.target:g}"

    def final(self, run: Run) -> float:
        """The run's final value of the accuracy (0 where it has none)."""
        return run.metrics.get(self.metric, 0.0)

    def steps(self, run: Run) -> int | None:
        """The TensorBoard step of the run's first validation at the target, None if none
        reached it (:func:`.learning_curve.steps_to_target`)."""
        return learning_curve.steps_to_target(run.scalars.get(self.metric, []), self.target)


def progress_of(
    runs: list[Run], metric: str | None = None, target: float | None = None
) -> Progress:
    """The :class:`Progress` to read ``runs`` by: ``metric`` and ``target`` where given;
    otherwise the outcome rule's where every run's config states the same rule, on
    ``val/token_acc``; otherwise ``val/seq_acc`` >= 0.9; InvalidSetting for a ``metric``
    or ``target`` out of range."""
    configs = (run.settings("outcome") for run in runs)
    rules = {OutcomeRule.of_config(config) for config in configs if config is not None}
    ruled = rules.pop() if len(rules) == 1 else None
    if ruled is not None and (ruled.metric == SEQUENCE_ACCURACY or ruled.metric not in CURVES):
        ruled = None  # val/seq_acc, or an accuracy of the test: read as by default
    metric = metric or (ruled.metric if ruled else SEQUENCE_ACCURACY)
    if target is None:
        target = ruled.threshold if ruled and ruled.metric == metric else SEQUENCE_TARGET
    return Progress(metric, target)
