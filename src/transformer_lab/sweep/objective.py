"""What a job returns to a sweeper that optimizes (``hparams_search=optuna``): one number.

The sweeper calls ``float()`` on every job's return value and, with the Optuna plugin,
a ``None`` or a NaN fails the trial, or the whole study. So a job that failed or diverged
returns the metric's *worst* finite value instead: the study learns that the setting is
bad and goes on. Which way is better follows from the metric's name, and a misspelt
name, or a sweeper's direction that does not suit it, is an error before anything trains
(:mod:`transformer_lab.job.checks`; the names: :mod:`transformer_lab.training.metric_names`).
"""

from transformer_lab.training.metric_names import higher_is_better

WORST_LOSS = 1e9  # loss and ppl: finite, and worse than any run that trained at all
# a job the sweep stopped (Ctrl-C) measured nothing: the Optuna plugin records its trial as
# failed, not scored, so a continued study runs it again (sweep/study.py)
STOPPED = float("nan")


def worst_value(name: str) -> float:
    return 0.0 if higher_is_better(name) else WORST_LOSS


def objective(name: str, metrics: dict[str, float]) -> float:
    """The job's value of ``name``; the worst value when it diverged (``metrics["diverged"]``)
    or never measured the metric."""
    if metrics.get("diverged") or name not in metrics:
        return worst_value(name)
    return float(metrics[name])
