"""What a job returns to a sweeper that optimizes (``hparams_search=optuna``): one number.

The sweeper calls ``float()`` on every job's return value and, with the Optuna plugin,
a ``None`` or a NaN fails the trial, or the whole study. So a job that failed or diverged
returns the metric's *worst* finite value instead: the study learns that the setting is
bad and goes on. Which way is better follows from the metric's name, and a misspelt
name, or a sweeper's direction that does not suit it, is an error before anything trains
(:mod:`transformer_lab.config_check`).
"""

import re

# val/seq_acc, test/loss, test_long/token_acc, ..., and the best val/seq_acc of the run
METRIC_PATTERN = re.compile(
    r"^(?:(?:val|test|test_long)/(loss|ppl|token_acc|seq_acc)|val/(seq_acc)_best)$"
)
HIGHER_IS_BETTER = ("token_acc", "seq_acc")  # fractions in [0, 1]: the worst is 0
WORST_LOSS = 1e9  # loss and ppl: finite, and worse than any run that trained at all


def _kind(match: re.Match) -> str:
    """``loss``, ``ppl``, ``token_acc`` or ``seq_acc``."""
    return match.group(1) or match.group(2)


def check_optimized_metric(name: str, direction: str | None = None) -> None:
    """Raise ValueError unless ``name`` is a metric a run reports, optimized the right way."""
    match = METRIC_PATTERN.match(name)
    if not match:
        raise ValueError(
            f"optimized_metric={name!r} is not a metric a run reports; allowed: "
            "<val|test|test_long>/<loss|ppl|token_acc|seq_acc> or val/seq_acc_best"
        )
    natural = "maximize" if _kind(match) in HIGHER_IS_BETTER else "minimize"
    if direction is not None and direction != natural:
        raise ValueError(
            f"optimized_metric={name} is to {natural}, but hydra.sweeper.direction="
            f"{direction}; allowed: hydra.sweeper.direction={natural}"
        )


def worst_value(name: str) -> float:
    match = METRIC_PATTERN.match(name)
    lower_is_better = match is not None and _kind(match) not in HIGHER_IS_BETTER
    return WORST_LOSS if lower_is_better else 0.0


def objective(name: str, metrics: dict[str, float]) -> float:
    """The job's value of ``name``; the worst value when it diverged (``metrics["diverged"]``)
    or never measured the metric."""
    if metrics.get("diverged") or name not in metrics:
        return worst_value(name)
    return float(metrics[name])
