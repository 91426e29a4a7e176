"""How a run ended, in one word: ``learned``, ``stalled`` or ``diverged``.

The lab's questions are often two-outcome: a configuration either learns the task or sits
at 0.000 (deep post-norm without warmup), and an average over such runs hides which.
So every run is classified by a rule its config states (``outcome:`` in ``conf/train.yaml``,
which an experiment may change): ``diverged`` when the divergence guard stopped it,
``learned`` when its final ``outcome.metric`` (an accuracy) reached ``outcome.threshold``,
``stalled`` otherwise. A diverged run is a failure to learn, never a missing value; the
report counts outcomes as ``k/n`` with an exact interval and compares them with an exact
test (:mod:`transformer_lab.report.proportions`).

A rule may also judge the run at earlier budgets (``outcome.at_steps: [400]``): a run of 800
steps whose schedule does not depend on its length (``linear_warmup``, ``constant``) is at
step 400 exactly what a 400-step run would end as, so one run serves two budgets. Its
``metrics.json`` then holds ``outcome@400`` beside ``outcome``, classified from the
validation after update 400 (``diverged`` if the guard had stopped it by then), and a
hypothesis compares the rates of learning at that budget as ``outcome/learned@400``.
"""

from dataclasses import dataclass

from omegaconf import DictConfig, OmegaConf

from transformer_lab.config.validation import InvalidSetting, check_number
from transformer_lab.training.metric_names import FRACTION_METRICS
from transformer_lab.training.thresholds import reaches

OUTCOMES = ("learned", "stalled", "diverged")
LEARNED = "outcome/learned"  # what a hypothesis names to compare the rates of learning


def learned_metric(step: int | None = None) -> str:
    """``outcome/learned``, or at a budget ``outcome/learned@<step>``."""
    return LEARNED if step is None else f"{LEARNED}@{step}"


def budget_of(metric: str) -> int | None:
    """The budget a learned-rate metric names (``outcome/learned@400``: 400), None for the
    final one; ValueError for a metric that is no learned rate."""
    if metric == LEARNED:
        return None
    prefix = f"{LEARNED}@"
    if metric.startswith(prefix) and metric[len(prefix) :].isdigit():
        return int(metric[len(prefix) :])
    raise ValueError(f"{metric!r} is not {LEARNED} or {prefix}<step>")


def is_learned(metric: str) -> bool:
    """Whether ``metric`` compares the rates of runs that learned (at the end or a budget)."""
    try:
        budget_of(metric)
    except ValueError:
        return False
    return True


def outcome_key(step: int | None) -> str:
    """Where ``metrics.json`` keeps the outcome at budget ``step`` (None: the final one)."""
    return "outcome" if step is None else f"outcome@{step}"


@dataclass(frozen=True)
class OutcomeRule:
    metric: str = "val/seq_acc"
    threshold: float = 0.5
    at_steps: tuple[int, ...] = ()  # earlier budgets also judged, each a validation's step

    def __post_init__(self):
        if self.metric not in FRACTION_METRICS:
            allowed = ", ".join(sorted(FRACTION_METRICS))
            raise InvalidSetting("outcome.metric", self.metric, "not an accuracy", allowed)
        check_number("outcome.threshold", self.threshold, minimum=0, maximum=1)
        steps = self.at_steps
        if not isinstance(steps, list | tuple) or any(
            isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in steps
        ):
            raise InvalidSetting("outcome.at_steps", steps, "not steps", "a list of integers >= 1")
        object.__setattr__(self, "at_steps", tuple(sorted(set(steps))))

    @classmethod
    def of_config(cls, cfg: DictConfig | None) -> "OutcomeRule":
        """The rule ``cfg`` states; the default for a config without one (a run made
        before outcomes were recorded)."""
        node = cfg is not None and OmegaConf.select(cfg, "outcome", default=None)
        return cls(**OmegaConf.to_container(node)) if node else cls()

    def classify(self, metrics: dict) -> str:
        """The outcome of a run whose ``metrics.json`` (or final metrics) is ``metrics``."""
        if metrics.get("diverged"):
            return "diverged"
        value = metrics.get(self.metric)
        return "learned" if value is not None and reaches(value, self.threshold) else "stalled"

    def classify_at(self, points: list[tuple[int, float]], diverged_at: int | None) -> dict:
        """``{"outcome@<s>": ..., "<metric>@<s>": value}`` for each budget ``s`` of
        ``at_steps``, from the rule metric's validation ``points`` (logged at step s - 1:
        ``runs/learning_curve.py``) and the step the run diverged at, if it did; a budget
        the run never validated at is left out."""
        values = dict(points)
        record = {}
        for step in self.at_steps:
            if diverged_at is not None and diverged_at <= step:
                record[outcome_key(step)] = "diverged"
            elif step - 1 in values:
                value = values[step - 1]
                record[f"{self.metric}@{step}"] = value
                record[outcome_key(step)] = (
                    "learned" if reaches(value, self.threshold) else ("stalled")
                )
        return record

    @property
    def text(self) -> str:
        text = f"learned: final {self.metric} >= {self.threshold:g}"
        if self.at_steps:
            text += f" (also at steps {', '.join(str(s) for s in self.at_steps)})"
        return text
