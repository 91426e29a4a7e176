"""For the report tests: :func:`hand_made_job`, for sweeps whose numbers are known (the
report on a tiny real sweep: tests/e2e/test_report.py), and :func:`scipy_p`, the p-value
the report's every test is pinned to."""

import json

import numpy as np
from scipy import stats
from torch.utils.tensorboard import SummaryWriter


def _mean_difference(x, y, axis):
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def scipy_p(a, b, permutation_type: str, alternative: str) -> float:
    """scipy.stats.permutation_test's p-value of the mean difference A - B (``"samples"``:
    paired, the sign-flip test; ``"independent"``: the labels), seeded as the report's."""
    found = stats.permutation_test(
        (a, b),
        _mean_difference,
        permutation_type=permutation_type,
        alternative=alternative,
        vectorized=True,
        random_state=0,
    )
    return float(found.pvalue)


def started_job(sweep, overrides: dict, config=""):
    """A job folder as Hydra leaves it when the job starts, no record of its end yet:
    ``.hydra/overrides.yaml`` and ``.hydra/config.yaml`` (``config``, YAML)."""
    job = sweep / ",".join(f"{k}={v}" for k, v in overrides.items()).replace("/", ".")
    (job / ".hydra").mkdir(parents=True)
    (job / ".hydra" / "overrides.yaml").write_text(
        "".join(f"- {k}={v}\n" for k, v in overrides.items())
    )
    (job / ".hydra" / "config.yaml").write_text(config or "{}\n")
    return job


def hand_made_job(sweep, overrides: dict, metrics: dict, curves: dict | None = None, config=""):
    """A finished job folder as the CLI leaves it, with just the files the report reads:
    :func:`started_job`'s, ``metrics.json``, the TensorBoard ``curves`` ``{tag: [(step,
    value), ...]}`` and ``config_resolved.yaml`` (``config``, YAML)."""
    job = started_job(sweep, overrides, config)
    (job / "metrics.json").write_text(json.dumps({"train_seconds": 1.0, **metrics}))
    if config:
        (job / "config_resolved.yaml").write_text(config)
    if curves:
        with SummaryWriter(str(job)) as writer:
            for tag, points in curves.items():
                for step, value in points:
                    writer.add_scalar(tag, value, step)
    return job
