"""Length generalization in a sweep: exact-match accuracy against source length.

Every run's ``metrics.json`` holds ``test/seq_acc_by_len/<words>`` and, when the data has a
``test_long`` split (``experiment=pe_extrapolation``), ``test_long/seq_acc_by_len/<words>``.
The two splits hold disjoint lengths (test_long starts past the longest training source),
so together they make one curve per configuration: the mean over its runs that did not
diverge, as in the final-metrics table.
"""

import math
import statistics
from pathlib import Path

from omegaconf import OmegaConf

from transformer_lab.callbacks.plotting import new_figure, save_png
from transformer_lab.config.renamed import current_data_settings
from transformer_lab.report.sweep import Sweep
from transformer_lab.report.table import EMPTY, markdown
from transformer_lab.training.metric_names import TEST_STAGES, length_series

ONE_CONFIGURATION = "all runs"  # the name of a sweep's configuration when only seeds vary
LEGEND_INSIDE = 8  # lines whose legend fits inside the axes
LEGEND_ROWS = 30  # entries in a column of a legend beside the axes


def accuracy_by_length(
    metrics: dict[str, float], splits: tuple[str, ...] = TEST_STAGES
) -> dict[int, float]:
    """``{words: seq_acc}`` of the ``splits`` of one run's metrics, in length order."""
    curve = {}
    for split in splits:
        curve |= length_series(metrics, split)
    return dict(sorted(curve.items()))


def configuration_curves(sweep: Sweep) -> dict[tuple[str, ...], dict[int, float]]:
    """``{configuration: {words: mean seq_acc}}`` over each configuration's runs that did
    not diverge, at the lengths all of them measured."""
    curves = {}
    for config, runs in sweep.configurations().items():
        run_curves = [accuracy_by_length(r.metrics) for r in runs if not r.diverged]
        lengths = set.intersection(*(set(c) for c in run_curves)) if run_curves else set()
        if lengths:
            curves[config] = {
                n: statistics.fmean(c[n] for c in run_curves) for n in sorted(lengths)
            }
    return curves


def drawn_splits(sweep: Sweep, curves: dict[tuple[str, ...], dict[int, float]]) -> list[str]:
    """The test splits of which ``curves`` (:func:`configuration_curves`) draw a length:
    ``test_long`` only where the runs had that split."""
    drawn = {n for curve in curves.values() for n in curve}
    kept = [r for r in sweep.finished if not r.diverged]
    return [s for s in TEST_STAGES if any(drawn & set(length_series(r.metrics, s)) for r in kept)]


def longest_trained(sweep: Sweep) -> int | None:
    """The longest training source (``data.max_task_len``) if every finished run shares it;
    only a synthetic task's (``data.task``) counts the source's words: the research tasks
    count digits or pairs, and pairs from files have none."""
    configs = (r.settings("data") for r in sweep.finished)
    lengths = {
        current_data_settings(config.data)["max_task_len"]  # a run's from before: max_len
        if OmegaConf.select(config, "data.task")
        else None
        for config in configs
        if config is not None
    }
    return lengths.pop() if len(lengths) == 1 else None


def plot_accuracy_by_length(
    curves: dict[str, dict[int, float]],
    path: Path,
    longest_trained: int | None = None,
    legend_title: str | None = None,
) -> Path:
    """Draw ``{label: {words: accuracy}}`` as lines into the PNG ``path``; a dashed line
    marks where the training lengths end. Beyond :data:`LEGEND_INSIDE` lines the legend
    goes beside the axes, in columns of :data:`LEGEND_ROWS`, and the figure grows to hold
    it (a grid's hundred configurations would otherwise squeeze the axes to nothing)."""
    columns = math.ceil(len(curves) / LEGEND_ROWS)
    inside = len(curves) <= LEGEND_INSIDE
    rows = min(len(curves), LEGEND_ROWS)
    figure = new_figure(7 + (0 if inside else 2.6 * columns), max(4, 1.2 + 0.17 * rows))
    axes = figure.add_subplot()
    for label, curve in curves.items():
        axes.plot(list(curve), list(curve.values()), marker="o", markersize=3, label=label)
    xlabel = "source length (words)"
    if longest_trained is not None:
        axes.axvline(longest_trained + 0.5, color="gray", linestyle="--", linewidth=1)
        xlabel += f"; dashed: the longest training source ({longest_trained})"
    axes.set(
        xlabel=xlabel,
        ylabel="exact-match accuracy (greedy)",
        ylim=(-0.03, 1.03),
        title="accuracy vs length",
    )
    axes.xaxis.get_major_locator().set_params(integer=True)
    axes.grid(alpha=0.3)
    legend = {"title": legend_title, "fontsize": 8, "title_fontsize": 8}
    if inside:
        axes.legend(**legend)
    else:
        figure.legend(loc="outside right upper", ncols=columns, **legend)
    return save_png(figure, path)


def accuracy_by_length_figure(sweep: Sweep, folder: Path) -> list[tuple[str, str]]:
    """The report's figure: one line per configuration (see :data:`FIGURES`)."""
    by_configuration = configuration_curves(sweep)
    if not by_configuration:
        return []
    curves = {", ".join(c) or ONE_CONFIGURATION: curve for c, curve in by_configuration.items()}
    legend_title = ", ".join(sweep.config_keys) or None
    plot_accuracy_by_length(
        curves, folder / "accuracy_by_length.png", longest_trained(sweep), legend_title
    )
    splits = drawn_splits(sweep, by_configuration)
    caption = (
        f"Exact-match accuracy (greedy) against source length, {' and '.join(splits)} "
        f"split{'s' if len(splits) > 1 else ''}, mean over each configuration's runs that did "
        "not diverge"
    )
    return [(caption, "accuracy_by_length.png")]


def length_table(sweep: Sweep) -> str | None:
    """Markdown: one row per configuration, its mean accuracy at each ``test_long`` length;
    None when no run has a test_long split."""
    long_lengths = sorted(
        {n for r in sweep.finished for n in accuracy_by_length(r.metrics, ("test_long",))}
    )
    if not long_lengths:
        return None
    rows = [
        [
            *(config or [ONE_CONFIGURATION]),
            *(f"{curve[n]:.3f}" if n in curve else EMPTY for n in long_lengths),
        ]
        for config, curve in configuration_curves(sweep).items()
    ]
    keys = sweep.config_keys or ["configuration"]
    return markdown([*keys, *(f"{n} words" for n in long_lengths)], rows)
