"""The report's figures. Each is a function ``(sweep, folder) -> [(caption, file name)]``
that writes its PNGs into ``folder`` (none when the sweep has nothing to show);
:data:`FIGURES` lists them in report order. To add a figure, write such a function and
add it to FIGURES.
"""

import math
import statistics
from collections.abc import Callable
from pathlib import Path

from transformer_lab.callbacks.norm_figure import grad_norm_by_layer_figure
from transformer_lab.callbacks.plotting import new_figure, save_png
from transformer_lab.report.lengths import accuracy_by_length_figure
from transformer_lab.report.sweep import Sweep, group_runs
from transformer_lab.runs import study_record

Figure = Callable[[Sweep, Path], list[tuple[str, str]]]
COLOUR_KEY = "model.norm"  # the override the curves are coloured by, when it varies


def val_loss_curves(sweep: Sweep, folder: Path) -> list[tuple[str, str]]:
    """Every finished run's ``val/loss`` against the step, one panel per configuration of the
    varying overrides other than ``model.norm``, coloured by ``model.norm`` (or, if the
    norm does not vary, by the first varying override), one line per seed."""
    runs = [r for r in sweep.finished if r.scalars.get("val/loss")]
    if not runs:
        return []
    keys = sweep.config_keys
    colour_keys = [COLOUR_KEY] if COLOUR_KEY in keys else keys[:1]
    panel_keys = [k for k in keys if k not in colour_keys]
    panels = group_runs(runs, panel_keys)
    colour_of = {value: f"C{i % 10}" for i, value in enumerate(group_runs(runs, colour_keys))}
    columns = min(3, len(panels))
    rows = math.ceil(len(panels) / columns)
    figure = new_figure(4.2 * columns, 3.2 * rows + 0.4)
    axes = figure.subplots(rows, columns, squeeze=False, sharey=True).flatten()
    for ax, (panel, panel_runs) in zip(axes, panels.items(), strict=False):
        for value, group in group_runs(panel_runs, colour_keys).items():
            for i, run in enumerate(group):
                steps, values = zip(*run.scalars["val/loss"], strict=True)
                label = ", ".join(value) if i == 0 and value else None
                colour = colour_of[value]  # "o-": a dot per validation, so one shows too
                ax.plot(steps, values, "o-", color=colour, markersize=3, alpha=0.8, label=label)
                if run.diverged:
                    ax.plot(steps[-1], values[-1], "x", color=colour, markersize=9)
        ax.set_title(
            ", ".join(f"{k}={v}" for k, v in zip(panel_keys, panel, strict=True)), fontsize=8
        )
        ax.set_xlabel("step")
        ax.set_ylabel("val/loss")
        if colour_keys:
            ax.legend(title=colour_keys[0], fontsize=7, title_fontsize=7)
    for ax in axes[len(panels) :]:
        ax.set_axis_off()
    values = [v for r in runs for _, v in r.scalars["val/loss"]]
    if min(values) > 0 and max(values) / min(values) > 10:  # losses over orders of magnitude
        axes[0].set_yscale("log")  # shared by every panel
    save_png(figure, folder / "val_loss.png")
    caption = (
        "Validation loss of every run against the TensorBoard step, one line per seed, a dot "
        "per validation; × marks a diverged run's last validation"
    )
    return [(caption, "val_loss.png")]


def _mean_grad_norms(records: list[dict]) -> dict:
    """Placement -> stack -> group -> per-layer mean over ``records``."""
    first = records[0]["grad_norm"]
    return {
        placement: {
            stack: {
                group: [
                    statistics.fmean(v)
                    for v in zip(
                        *(r["grad_norm"][placement][stack][group] for r in records), strict=True
                    )
                ]
                for group in groups
            }
            for stack, groups in stacks.items()
        }
        for placement, stacks in first.items()
    }


def grad_norm_by_layer(sweep: Sweep, folder: Path) -> list[tuple[str, str]]:
    """The twins' gradient norm by layer at initialisation, per architecture of the sweep
    (Xiong et al., 2020), averaged over the runs that measured it."""
    architectures = sweep.architectures()
    written = []
    for i, (name, records) in enumerate(architectures.items()):
        file = (
            "grad_norm_by_layer.png" if len(architectures) == 1 else f"grad_norm_by_layer_{i}.png"
        )
        placements = " vs ".join(records[0]["grad_norm"])
        title = f"gradient norm by layer at init: {placements} ({name}; mean of {len(records)})"
        save_png(grad_norm_by_layer_figure(_mean_grad_norms(records), title), folder / file)
        written.append((f"Gradient norm by layer at initialisation, {name}", file))
    return written


def study_figures(sweep: Sweep, folder: Path) -> list[tuple[str, str]]:
    """The Optuna study's figures (:mod:`transformer_lab.report.study`) of a sweep that
    holds one; that module, and Optuna with it, is imported for such a sweep only, so that
    the report of any other runs without the ``[tune]`` extra."""
    if study_record.find(sweep.path) is None:
        return []
    from transformer_lab.report import study  # imports Optuna

    return study.study_figures(sweep, folder)


FIGURES: list[Figure] = [
    val_loss_curves,
    accuracy_by_length_figure,
    grad_norm_by_layer,
    study_figures,
]
