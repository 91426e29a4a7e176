"""The report's tables: one row per configuration, mean ± std over its seeds.

Final metrics average the runs that did not diverge (a diverged run's last validation is
of an earlier state, restored by the divergence guard); the ``diverged`` column counts
the others and says at which steps they diverged. ``steps to val/seq_acc >= target`` is
the first validation step at which a run reached the target, over the same runs (see
:func:`steps_cell`, which the learning-rate window's table shares).
"""

import statistics

from transformer_lab.report.sweep import Sweep
from transformer_lab.runs import learning_curve
from transformer_lab.runs.reader import Run

TABLE_METRICS = (
    "val/loss",
    "val/seq_acc",
    "test/seq_acc",
    "test_long/seq_acc",
    "test/bleu",  # data=pairs: sacrebleu's 0-100 scale
    "test/chrf",
)
EMPTY = "—"
FORMATS = {"seq_acc": ".3f", "bleu": ".1f", "chrf": ".1f"}  # by metric; else .4f


def mean_std(values: list[float], fmt: str) -> str:
    """``"m ± s"`` with the sample standard deviation; just ``"m"`` for one value."""
    if not values:
        return EMPTY
    mean = f"{statistics.fmean(values):{fmt}}"
    return mean if len(values) == 1 else f"{mean} ± {statistics.stdev(values):{fmt}}"


def steps_to_target(run: Run, target: float) -> int | None:
    return learning_curve.steps_to_target(run.scalars.get(learning_curve.CURVE_TAG, []), target)


def markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = [header, ["---"] * len(header), *rows]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


def steps_cell(runs: list[Run], target: float) -> str:
    """The steps to ``target`` of the ``runs`` that did not diverge, like every other column:
    mean ± std over those that reached it, ``(k/n runs)`` when only k of the n did, ``never``
    when none did, ``—`` when every run diverged (a diverged run may well have reached the
    target before it diverged; its steps say nothing of how long a run that trains takes)."""
    kept = [r for r in runs if not r.diverged]
    if not kept:
        return EMPTY
    steps = [s for s in (steps_to_target(r, target) for r in kept) if s is not None]
    if not steps:
        return "never"
    cell = mean_std([float(s) for s in steps], ".0f")
    return cell if len(steps) == len(kept) else f"{cell} ({len(steps)}/{len(kept)} runs)"


def _diverged_cell(runs: list[Run]) -> str:
    steps = [str(r.metrics.get("diverged_at_step")) for r in runs if r.diverged]
    cell = f"{len(steps)}/{len(runs)}"
    return f"**{cell}** (step {', '.join(steps)})" if steps else cell


def configuration_table(sweep: Sweep, target: float) -> str:
    """The markdown table of the sweep's finished runs, one row per configuration."""
    configurations = sweep.configurations()
    finished = [r for runs in configurations.values() for r in runs]
    metrics = [m for m in TABLE_METRICS if any(m in r.metrics for r in finished)]
    header = [*sweep.config_keys, "runs", "diverged", *metrics]
    header += [f"steps to val/seq_acc ≥ {target:g}", "train s"]
    rows = []
    for config, runs in configurations.items():
        kept = [r for r in runs if not r.diverged]
        row = [*config, str(len(runs)), _diverged_cell(runs)]
        for metric in metrics:
            values = [r.metrics[metric] for r in kept if metric in r.metrics]
            row.append(mean_std(values, FORMATS.get(metric.rpartition("/")[2], ".4f")))
        row.append(steps_cell(runs, target))
        row.append(mean_std([r.metrics["train_seconds"] for r in runs], ".0f"))
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
            mean_std([r["output_change"][p] for r in records if p in r["output_change"]], ".2e")
            for p in placements
        ]
        for name, records in architectures.items()
    ]
    return markdown(["architecture", *placements], rows)
