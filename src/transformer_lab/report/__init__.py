"""The sweep report: ``python -m transformer_lab.report outputs/multirun/<sweep>``.

Reads every job of a Hydra multirun (its overrides, ``metrics.json``, TensorBoard scalars
and ``norm_comparison.json``) and writes ``report.md`` plus PNG figures into the sweep
folder, and both into the TensorBoard run ``<sweep>/report/``: final metrics per
configuration (mean ± std over seeds), steps to a target ``val/seq_acc``, diverged runs
marked, accuracy by length past the training lengths (a ``test_long`` split, as in
``experiment=pe_extrapolation``), the learning-rate window when the sweep varies
``model.lr`` (a heatmap per architecture, the best learning rate per configuration), and
figures: the validation-loss curves grouped by ``model.norm``, exact-match accuracy
against length, and the gradient norm by layer at initialisation per norm placement.
It groups by whichever overrides vary, so it works on any sweep; jobs that have not
finished (still running, killed, failed) are listed, and the finished ones still reported.
"""

import argparse
import sys
from pathlib import Path

from transformer_lab.console import quiet_library_notices
from transformer_lab.report.figures import FIGURES
from transformer_lab.report.lengths import length_table
from transformer_lab.report.lr_window import best_lr_table, lr_heatmaps
from transformer_lab.report.provenance import provenance_section
from transformer_lab.report.sweep import NotASweep, Sweep, group_runs, load_sweep
from transformer_lab.report.table import configuration_table, output_change_table
from transformer_lab.report.tensorboard import write_tensorboard


def _unfinished_lines(sweep: Sweep) -> list[str]:
    lines = []
    for run in sweep.unfinished:
        if run.failure:
            why = f"failed: {run.failure_reason}"
        else:
            why = "no metrics.json yet: still running, or stopped before the end"
        lines.append(f"- `{run.name}`: {why}")
    return lines


def _replicates(sweep: Sweep) -> str:
    """What the runs of one configuration have in common: say ``differ by seed`` only where
    some configuration has more than one job."""
    key = f"`{sweep.replicate_key}`"
    jobs = group_runs(sweep.runs, sweep.config_keys).values()
    if max(len(runs) for runs in jobs) > 1:
        return f"runs of one configuration differ by {key} (the replicate key)"
    return f"each configuration ran once, so there is no spread over {key}"


def render(sweep: Sweep, target: float) -> tuple[str, list[tuple[str, str]]]:
    """``report.md`` of ``sweep`` and its figures ``[(caption, file)]``, which it writes
    into the sweep folder on the way."""
    keys = ", ".join(f"`{k}`" for k in sweep.config_keys) or "nothing (one configuration)"
    lines = [
        f"# Sweep report: {sweep.path.name}",
        "",
        f"{len(sweep.runs)} jobs, {len(sweep.finished)} finished; configurations differ by "
        f"{keys}; {_replicates(sweep)}.",
        "",
        "## Final metrics",
        "",
        f"Mean ± sample std over the runs of each configuration; diverged runs are counted, "
        f"not averaged, in every column. Steps: the first validation with `val/seq_acc` ≥ "
        f"{target:g}, as TensorBoard's step (Lightning logs the validation after update n at "
        "step n − 1), over the runs that did not diverge; (k/n runs): k of those n reached it.",
        "",
        configuration_table(sweep, target),
    ]
    lengths = length_table(sweep)
    if lengths:
        lines += [
            "",
            "## Length generalization",
            "",
            "Mean exact match (greedy) at each `test_long` length, all past the "
            "longest training source; the accuracy-vs-length figure below draws "
            "these with the in-range lengths.",
            "",
            lengths,
        ]
    best_lrs = best_lr_table(sweep, target)
    heatmaps = lr_heatmaps(sweep, sweep.path, target) if best_lrs else []
    if best_lrs:
        lines += [
            "",
            "## Learning-rate window",
            "",
            "Best learning rate per configuration: the highest mean final `val/seq_acc` "
            "over its runs, a diverged run counting as 0.",
            "",
            best_lrs,
        ]
        for caption, file in heatmaps:
            lines += ["", f"{caption}:", "", f"![{caption}]({file})"]
    if sweep.unfinished:
        lines += ["", "## Not finished", "", *_unfinished_lines(sweep)]
    lines += provenance_section(sweep)
    figures = [figure for make in FIGURES for figure in make(sweep, sweep.path)]
    lines += ["", "## Figures"]
    for caption, file in figures:
        lines += ["", f"{caption}:", "", f"![{caption}]({file})"]
    changes = output_change_table(sweep.architectures())
    if changes:
        lines += [
            "",
            "## Output change under weight noise at initialisation",
            "",
            "Mean squared change of the logits when every weight matrix gets noise "
            "of its std times the configured perturbation (Liu et al., 2020), "
            "per norm placement of the twins:",
            "",
            changes,
        ]
    return "\n".join(lines) + "\n", heatmaps + figures


def write_report(path: Path, target: float = 0.9, replicate_key: str = "seed") -> Path:
    sweep = load_sweep(path, replicate_key)
    if not sweep.finished:
        raise NotASweep(
            f"{path}: none of its {len(sweep.runs)} jobs has finished yet (no metrics.json); "
            "nothing to report"
        )
    text, figures = render(sweep, target)
    report = path / "report.md"
    report.write_text(text)
    sections = text.split("\n## ")
    tables = "\n## ".join(s for s in sections if not s.startswith("Figures"))  # images instead
    write_tensorboard(path, tables, figures)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m transformer_lab.report",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("sweep", type=Path, help="a multirun folder: outputs/multirun/<time>")
    parser.add_argument(
        "--target", type=float, default=0.9, help="the val/seq_acc to count steps to (0.9)"
    )
    parser.add_argument(
        "--replicate-key", default="seed", help="the override whose runs are averaged (seed)"
    )
    args = parser.parse_args(argv)
    quiet_library_notices()
    try:
        report = write_report(args.sweep, args.target, args.replicate_key)
    except NotASweep as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(report.read_text())  # the tables, readable in the terminal too
    print(f"report: {report}")
    return 0
