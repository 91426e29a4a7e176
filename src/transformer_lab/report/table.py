"""The report's tables: one row per configuration, the mean and 95% interval over its seeds.

A cell reads ``mean [low, high] n=k`` (Student t over the k runs, cut to the metric's
range, see :mod:`.statistics`); one run reads ``value n=1``, with no interval. The
``learned`` column counts the runs that learned by the runs' outcome rule, ``k/n`` with
the rate's exact interval (:mod:`.proportions`), every finished run counted. Final
metrics are over the runs that did not diverge (a diverged run's last validation is of an
earlier state, restored by the divergence guard); the ``diverged`` column counts the
others and says at which steps they diverged. The training-stability table counts every
finished run, diverged or not: how a run trained is the point there. Steps to the
progress target (``val/seq_acc >= 0.9`` by default, :mod:`.progress`) are censored data,
one function shared with the learning-rate window's table (:func:`steps_cell`).
"""

import math

from omegaconf import OmegaConf

from transformer_lab.report.progress import Progress
from transformer_lab.report.proportions import rate_interval
from transformer_lab.report.statistics import Bounds, censored_median, estimate
from transformer_lab.report.sweep import Sweep
from transformer_lab.runs import learning_curve
from transformer_lab.runs.outcome import LEARNED
from transformer_lab.runs.reader import Run
from transformer_lab.training.metric_names import STABILITY_METRICS, metric_range

TABLE_METRICS = (
    "val/loss",
    "val/seq_acc",
    "val/seq_acc_auc",
    "test/seq_acc",
    "test_long/seq_acc",
    "test/bleu",  # data=pairs: sacrebleu's 0-100 scale
    "test/chrf",
)
EMPTY = "—"


def metric_format(metric: str) -> str:
    """How a value of ``metric`` is written: fractions and rates to 3 places, losses to 4, BLEU and
    chrF (0-100) to 1."""
    if metric.endswith(("acc", "auc", "fraction", "learned")):
        return ".3f"
    if metric.endswith(("bleu", "chrf")):
        return ".1f"
    if metric.endswith("loss"):
        return ".4f"
    return ".3g"


def interval_cell(values: list[float], fmt: str, bounds: Bounds = (None, None)) -> str:
    """``"m [low, high] n=k"``, the interval inside ``bounds``; ``"m n=1"`` for one value;
    ``—`` for none."""
    if not values:
        return EMPTY
    found = estimate(values, bounds)
    if found.low is None:
        return f"{found.mean:{fmt}} n=1"
    return f"{found.mean:{fmt}} [{found.low:{fmt}}, {found.high:{fmt}}] n={found.n}"


def max_steps(run: Run) -> float:
    """The steps the run was to train: its config's ``trainer.max_steps``; for a run
    without its resolved config, the step it ended at, or its last validation's."""
    config = run.settings("trainer")
    configured = config and OmegaConf.select(config, "trainer.max_steps", default=None)
    if configured or run.metrics.get("global_step"):
        return float(configured or run.metrics["global_step"])
    curve = run.scalars.get(learning_curve.CURVE_TAG, [])
    return float(curve[-1][0] + 1) if curve else 0.0


def markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = [header, ["---"] * len(header), *rows]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


def steps_cell(runs: list[Run], progress: Progress) -> str:
    """The median steps to ``progress``'s target of the finished ``runs`` and how many
    reached it, ``"449 (2/3)"``: a run that never reached it counts as beyond its
    ``max_steps``, and so does a run that diverged (whatever it reached before, it did not
    train on), so the median is ``> m`` where such a run is at or below the middle."""
    finished = [r for r in runs if r.finished]
    if not finished:
        return EMPTY
    steps = []
    for run in finished:
        reached = None if run.diverged else progress.steps(run)
        steps.append((max_steps(run), False) if reached is None else (float(reached), True))
    median = censored_median(steps)
    counts = f"({median.reached}/{median.n})"
    if median.exact:
        return f"{median.value:.0f} {counts}"
    return f"> {math.floor(median.value)} {counts}"


def learned_cell(runs: list[Run], metric: str = LEARNED) -> str:
    """``"2/3 [0.094, 0.992]"``: the finished runs that learned (by the budget ``metric``
    names, ``outcome/learned@400``; at the end by default) and the rate's exact interval."""
    k, n = sum(r.learned(metric) for r in runs), len(runs)
    low, high = rate_interval(k, n)
    return f"{k}/{n} [{low:.3f}, {high:.3f}]"


def _diverged_cell(runs: list[Run]) -> str:
    steps = [str(r.metrics.get("diverged_at_step")) for r in runs if r.diverged]
    cell = f"{len(steps)}/{len(runs)}"
    return f"**{cell}** (step {', '.join(steps)})" if steps else cell


def configuration_table(sweep: Sweep, progress: Progress) -> str:
    """The markdown table of the sweep's finished runs, one row per configuration: the
    :data:`TABLE_METRICS` the runs have, and ``progress``'s accuracy after the loss."""
    configurations = sweep.configurations()
    finished = [r for runs in configurations.values() for r in runs]
    shown = dict.fromkeys([TABLE_METRICS[0], progress.metric, *TABLE_METRICS[1:]])
    metrics = [m for m in shown if any(m in r.metrics for r in finished)]
    header = [*sweep.config_keys, "runs", "learned", "diverged", *metrics]
    header += [f"median steps to {progress.label} (reached)", "train s (mean)"]
    rows = []
    for config, runs in configurations.items():
        kept = [r for r in runs if not r.diverged]
        row = [*config, str(len(runs)), learned_cell(runs), _diverged_cell(runs)]
        for metric in metrics:
            values = [r.metrics[metric] for r in kept if metric in r.metrics]
            row.append(interval_cell(values, metric_format(metric), metric_range(metric)))
        row.append(steps_cell(runs, progress))
        seconds = [r.metrics["train_seconds"] for r in runs]
        row.append(f"{sum(seconds) / len(seconds):.0f}")
        rows.append(row)
    return markdown(header, rows)


def stability_table(sweep: Sweep) -> str | None:
    """How each configuration trained, over all its finished runs: the fraction of steps
    whose gradient was clipped, the largest pre-clip gradient norm and the loss spikes
    (``callbacks/training_stability.py``); None when no run measured them."""
    configurations = sweep.configurations()
    finished = [r for runs in configurations.values() for r in runs]
    metrics = [m for m in STABILITY_METRICS if any(m in r.metrics for r in finished)]
    if not metrics:
        return None
    header = [*sweep.config_keys, "runs", "diverged", *metrics]
    rows = []
    for config, runs in configurations.items():
        row = [*config, str(len(runs)), _diverged_cell(runs)]
        for metric in metrics:
            values = [r.metrics[metric] for r in runs if metric in r.metrics]
            row.append(interval_cell(values, metric_format(metric), metric_range(metric)))
        rows.append(row)
    return markdown(header, rows)


def output_change_table(architectures: dict[str, list[dict]]) -> str | None:
    """Liu et al.'s output change per placement, ``{architecture: [norm_comparison.json]}``."""
    placements = list(
        dict.fromkeys(
            p for records in architectures.values() for r in records for p in r["output_change"]
        )
    )
    if not placements:
        return None
    rows = [
        [name]
        + [
            interval_cell(  # a mean squared change: never below 0
                [r["output_change"][p] for r in records if p in r["output_change"]],
                ".2e",
                (0.0, None),
            )
            for p in placements
        ]
        for name, records in architectures.items()
    ]
    return markdown(["architecture", *placements], rows)
