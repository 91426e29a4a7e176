"""The metrics a run reports, by name, and which way each is better: what
``optimized_metric`` may name (a sweeper optimizes it, :mod:`transformer_lab.sweep.objective`).
"""

import re

# val/seq_acc, test/loss, test_long/token_acc, val/bleu (data=pairs), ..., and the best
# val/seq_acc of the run
METRIC_PATTERN = re.compile(
    r"^(?:(?:val|test|test_long)/(loss|ppl|token_acc|seq_acc|bleu|chrf)|val/(seq_acc)_best)$"
)
# fractions in [0, 1] and scores in [0, 100]: the worst is 0
HIGHER_IS_BETTER = ("token_acc", "seq_acc", "bleu", "chrf")


def higher_is_better(name: str) -> bool:
    """Whether a larger value of the metric ``name`` is better; a name that is no metric of
    :data:`METRIC_PATTERN` counts as a fraction, higher better."""
    match = METRIC_PATTERN.match(name)
    return match is None or (match.group(1) or match.group(2)) in HIGHER_IS_BETTER


def check_optimized_metric(name: str, direction: str | None = None) -> None:
    """Raise ValueError unless ``name`` is a metric a run reports, optimized the right way."""
    if not METRIC_PATTERN.match(name):
        raise ValueError(
            f"optimized_metric={name!r} is not a metric a run reports; allowed: "
            "<val|test|test_long>/<loss|ppl|token_acc|seq_acc|bleu|chrf> or val/seq_acc_best"
        )
    natural = "maximize" if higher_is_better(name) else "minimize"
    if direction is not None and direction != natural:
        raise ValueError(
            f"optimized_metric={name} is to {natural}, but hydra.sweeper.direction="
            f"{direction}; allowed: hydra.sweeper.direction={natural}"
        )
