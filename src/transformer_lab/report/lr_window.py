"""The learning-rate window: at which learning rates (and warmups) each architecture trains.

The post- vs pre-norm result is about a *range* more than one rate: Xiong et al. (2020,
§3.2, Figure 2) find Post-LN's training "sensitive to" the warm-up length at a given
maximum rate, and (§4.1) a larger rate for their Post-LN BERT "diverged", while Pre-LN
trains without warm-up at the rates they try (§4.2); Liu et al. (2020, §1) call Post-LN
"less robust" than Pre-LN. The window this module draws is the lab's reading of that, not
a figure of either paper's. One learning rate cannot show it, so for any sweep that
varies ``optim.lr`` the report draws, per configuration of the other varying keys (the
norm placement first of all), a heatmap of learning rate x warmup, and tabulates each
configuration's best learning rate, its window (the rates at which every run was stable)
and each seed's largest stable rate, the window's edge with its spread.
"Best" is the highest mean, a description, not a tested difference; rates that share the
highest mean as the table shows it (three places) are a tie, named as one: no best among
equals.
A run is stable by accuracy (:func:`learned`), not by a loss cut, which a stalled run can
pass: the report's progress accuracy (:mod:`.progress`; ``val/seq_acc`` and 0.9 by
default).

A cell's colour is that accuracy's final value, the mean over its runs that did not
diverge.
Cells that are not such a value say so in the cell itself, never by colour alone: a
diverged cell is grey and reads ``diverged``; a failed one is blank and reads ``failed``,
one whose runs have not finished (a sweep running or paused) blank and ``unfinished``; a
cell whose runs never reached the target is hatched and reads ``< target`` under its value.
The panels wrap after :data:`PANELS_PER_ROW`, each titled a setting a line, so that a
grid's dozens of configurations stay readable.
"""

import math
import statistics
from pathlib import Path

from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.patches import Rectangle

from transformer_lab.callbacks.plotting import new_figure, save_png
from transformer_lab.report.progress import Progress
from transformer_lab.report.sweep import NOT_SET, Sweep, group_runs
from transformer_lab.report.table import EMPTY, interval_cell, markdown, steps_cell
from transformer_lab.runs.order import natural_key
from transformer_lab.runs.reader import Run
from transformer_lab.training.metric_names import metric_range
from transformer_lab.training.thresholds import reaches

LR_KEY = "optim.lr"
SEED_KEY = "seed"
WARMUP_KEYS = ("optim.schedule", "optim.warmup_steps")  # what "warmup" means in a sweep
COLOURS = ScalarMappable(Normalize(0.0, 1.0), "viridis")  # an accuracy: 0..1
PANELS_PER_ROW = 6


def _sorted_values(runs: list[Run], key: str) -> list[str]:
    return sorted({r.overrides.get(key, NOT_SET) for r in runs}, key=natural_key)


def score(runs: list[Run], progress: Progress) -> float | None:
    """How well a learning rate trained: the mean final accuracy over its finished runs, a
    diverged run counting as 0 (it did not train). None without a finished run."""
    finished = [r for r in runs if r.finished]
    if not finished:
        return None
    return statistics.fmean(0.0 if r.diverged else progress.final(r) for r in finished)


def learned(run: Run, progress: Progress) -> bool:
    """A stable run, by accuracy: finished, not diverged, its final accuracy at the target.
    A run that stalls (at 0.000, with a loss below the uniform guess's) is not stable."""
    return run.finished and not run.diverged and reaches(progress.final(run), progress.target)


def largest_by_seed(by_lr: dict[tuple[str], list[Run]], progress: Progress) -> str:
    """Per seed, the largest learning rate at which that seed's run was stable (``none``):
    the window's upper edge as each seed sees it, so the spread over seeds is the edge's
    uncertainty, e.g. ``0: 0.002, 1: 0.002, 2: 0.004``. A seed none of whose runs has
    finished (a sweep still running) is not named."""
    edges: dict[str, float | None] = {}
    for (lr,), runs in by_lr.items():
        for run in (r for r in runs if r.finished):
            seed = run.overrides.get(SEED_KEY, NOT_SET)
            edges.setdefault(seed, None)
            if learned(run, progress) and (edges[seed] is None or float(lr) > edges[seed]):
                edges[seed] = float(lr)
    return ", ".join(
        f"{seed}: {'none' if edges[seed] is None else _format_lr(str(edges[seed]))}"
        for seed in sorted(edges, key=natural_key)
    )


def _reached(runs: list[Run], progress: Progress) -> bool:
    return any(progress.steps(r) is not None for r in runs if not r.diverged)


def _format_lr(value: str) -> str:
    try:
        return f"{float(value):.2g}"
    except ValueError:
        return value


def _best(scored: dict[str, float]) -> list[str]:
    """The learning rates of the highest score as the table shows it (three places): one,
    or several that tie, in natural order."""
    top = f"{max(scored.values()):.3f}"
    return [lr for lr in sorted(scored, key=natural_key) if f"{scored[lr]:.3f}" == top]


def _best_cells(
    best: list[str], scored: dict[str, float], by_lr: dict, progress: Progress
) -> list[str]:
    """The best rate and its runs' cells, or a tie named as one with empty cells."""
    metric = progress.metric
    if len(best) > 1:
        rates = ", ".join(_format_lr(lr) for lr in best)
        return [f"tie: {rates} ({metric} {scored[best[0]]:.3f} each)", *[EMPTY] * 4]
    runs = [r for r in by_lr[(best[0],)] if r.finished]
    kept = [r for r in runs if not r.diverged]
    return [
        _format_lr(best[0]),
        f"{len(runs) - len(kept)}/{len(runs)}",
        interval_cell(
            [r.metrics[metric] for r in kept if metric in r.metrics], ".3f", metric_range(metric)
        ),
        interval_cell(
            [r.metrics["val/loss"] for r in kept if "val/loss" in r.metrics],
            ".4f",
            metric_range("val/loss"),
        ),
        steps_cell(runs, progress),
    ]


def best_lr_table(sweep: Sweep, progress: Progress) -> str | None:
    """Markdown, one row per configuration (every varying key but the learning rate and the
    seed): its best learning rate by :func:`score`, that learning rate's metrics, the
    window, the learning rates whose every run was stable (:func:`learned`), and each
    seed's largest stable rate (:func:`largest_by_seed`). None when the sweep does not vary
    the learning rate."""
    if LR_KEY not in sweep.config_keys:
        return None
    keys = [k for k in sweep.config_keys if k != LR_KEY]
    rows = []
    configurations = group_runs(sweep.runs, keys)
    for config in configurations:
        by_lr = group_runs(configurations[config], [LR_KEY])
        scored = {lr: score(runs, progress) for (lr,), runs in by_lr.items()}
        scored = {lr: s for lr, s in scored.items() if s is not None}
        if not scored:
            continue
        window = [
            _format_lr(lr)
            for lr in sorted(scored, key=natural_key)
            if all(learned(r, progress) for r in by_lr[(lr,)])
        ]
        rows.append(
            [
                *config,
                *_best_cells(_best(scored), scored, by_lr, progress),
                ", ".join(window) or "none",
                largest_by_seed(by_lr, progress),
            ]
        )
    header = [
        *keys,
        f"best {LR_KEY}",
        "diverged",
        progress.metric,
        "val/loss",
        f"median steps to {progress.label} (reached)",
        f"trains (every run ≥ {progress.target:g}) at {LR_KEY}",
        f"largest {LR_KEY} that trains, per seed",
    ]
    return markdown(header, rows)


def _cell_text(runs: list[Run], progress: Progress) -> tuple[float | None, str, str | None]:
    """``(colour value, text, hatch)`` of one heatmap cell."""
    finished = [r for r in runs if r.finished]
    kept = [r for r in finished if not r.diverged]
    if not finished:
        if not runs:
            return None, EMPTY, None
        return None, "failed" if any(r.failure for r in runs) else "unfinished", None
    if not kept:
        return None, "diverged", None
    value = statistics.fmean(progress.final(r) for r in kept)
    text = f"{value:.2f}"
    if len(kept) < len(finished):
        text += f"\n{len(finished) - len(kept)}/{len(finished)} div."
    if not _reached(kept, progress):
        return value, f"{text}\n< {progress.target:g}", "///"
    return value, text, None


def lr_heatmaps(sweep: Sweep, folder: Path, progress: Progress) -> list[tuple[str, str]]:
    """One heatmap panel per configuration of the keys other than learning rate and warmup:
    rows are learning rates, columns the warmup settings the sweep tried."""
    if LR_KEY not in sweep.config_keys:
        return []
    warmup_keys = [k for k in WARMUP_KEYS if k in sweep.config_keys]
    panel_keys = [k for k in sweep.config_keys if k != LR_KEY and k not in warmup_keys]
    lrs = _sorted_values(sweep.runs, LR_KEY)
    columns = list(group_runs(sweep.runs, warmup_keys))
    panels = group_runs(sweep.runs, panel_keys)
    across = min(len(panels), PANELS_PER_ROW)
    down = math.ceil(len(panels) / across)
    title_lines = max(len(panel_keys), 1)
    figure = new_figure(
        1.6 + 1.8 * len(columns) * across, down * (1.2 + 0.5 * len(lrs) + 0.15 * title_lines)
    )
    grid = figure.subplots(down, across, squeeze=False, sharey=True)
    places = list(grid.flat)
    axes = places[: len(panels)]
    for ax in places[len(panels) :]:
        ax.set_visible(False)  # the last row's places past the last panel
    for ax, panel in zip(axes, panels, strict=True):
        cells = group_runs(panels[panel], [LR_KEY, *warmup_keys])
        for i, lr in enumerate(lrs):
            for j, column in enumerate(columns):
                value, text, hatch = _cell_text(cells.get((lr, *column), []), progress)
                colour = "lightgrey" if text == "diverged" else "white"
                if value is not None:
                    colour = COLOURS.to_rgba(value)
                ax.add_patch(
                    Rectangle(
                        (j - 0.5, i - 0.5),
                        1,
                        1,
                        facecolor=colour,
                        hatch=hatch,
                        edgecolor="black",
                        linewidth=0.5,
                    )
                )
                dark = value is not None and value < 0.5 and not hatch
                box = {"facecolor": "white", "edgecolor": "none", "pad": 1} if hatch else None
                ax.text(
                    j,
                    i,
                    text,
                    ha="center",
                    va="center",
                    fontsize=7,
                    bbox=box,
                    color="white" if dark else "black",
                )
        ax.set(
            xlim=(-0.5, len(columns) - 0.5),
            ylim=(-0.5, len(lrs) - 0.5),
            xticks=range(len(columns)),
            yticks=range(len(lrs)),
        )
        ax.set_xticklabels([", ".join(c) or "—" for c in columns], fontsize=7)
        ax.set_yticklabels([_format_lr(lr) for lr in lrs], fontsize=7)
        ax.set_xlabel(", ".join(warmup_keys) or "(one warmup setting)", fontsize=8)
        title = "\n".join(f"{k}={v}" for k, v in zip(panel_keys, panel, strict=True))
        ax.set_title(title or "all runs", fontsize=7)
    for row in grid:
        row[0].set_ylabel(LR_KEY)
    figure.colorbar(COLOURS, ax=axes, label=f"final {progress.metric}", shrink=0.8)
    save_png(figure, folder / "lr_window.png")
    caption = (
        f"Final {progress.metric} by learning rate and warmup (mean over runs that did not "
        f"diverge); grey: diverged, hatched: never reached {progress.label}, blank: failed or "
        "unfinished"
    )
    return [(caption, "lr_window.png")]
