"""How a run ended, in one word: ``learned``, ``stalled`` or ``diverged``.

The lab's questions are often two-outcome: a configuration either learns the task or sits
at 0.000 (deep post-norm without warmup), and an average over such runs hides which.
So every run is classified by a rule its config states (``outcome:`` in ``conf/train.yaml``,
which an experiment may change): ``diverged`` when the divergence guard stopped it,
``learned`` when its final ``outcome.metric`` (an accuracy) reached ``outcome.threshold``,
``stalled`` otherwise. A diverged run is a failure to learn, never a missing value; the
report counts outcomes as ``k/n`` with an exact interval and compares them with an exact
test (:mod:`transformer_lab.report.proportions`).
"""

from dataclasses import dataclass

from omegaconf import DictConfig, OmegaConf

from transformer_lab.config.validation import InvalidSetting, check_number
from transformer_lab.training.metric_names import FRACTION_METRICS
from transformer_lab.training.thresholds import reaches

OUTCOMES = ("learned", "stalled", "diverged")
LEARNED = "outcome/learned"  # what a hypothesis names to compare the rates of learning


@dataclass(frozen=True)
class OutcomeRule:
    metric: str = "val/seq_acc"
    threshold: float = 0.5

    def __post_init__(self):
        if self.metric not in FRACTION_METRICS:
            allowed = ", ".join(sorted(FRACTION_METRICS))
            raise InvalidSetting("outcome.metric", self.metric, "not an accuracy", allowed)
        check_number("outcome.threshold", self.threshold, minimum=0, maximum=1)

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

    @property
    def text(self) -> str:
        return f"learned: final {self.metric} >= {self.threshold:g}"
