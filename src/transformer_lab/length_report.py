"""Exact-match accuracy against source length, one line per run: length generalization.

    python -m transformer_lab.length_report outputs/multirun/<sweep>

reads each run's ``metrics.json`` (``test/`` and ``test_long/seq_acc_by_len/<words>``) and
``config_resolved.yaml``, prints a markdown table and writes ``accuracy_by_length.png``
into the sweep folder. A sweep report reuses :func:`accuracy_by_length` and
:func:`plot_accuracy_by_length`.
"""

import argparse
import json
import sys
from pathlib import Path

from omegaconf import OmegaConf

from transformer_lab.plotting import new_figure, save_png


def accuracy_by_length(
    metrics: dict[str, float], splits: tuple[str, ...] = ("test", "test_long")
) -> dict[int, float]:
    """``{words: seq_acc}`` of the ``splits`` of one run's metrics.

    The test and test_long splits hold disjoint lengths (test_long starts past the longest
    training source), so together they make one curve.
    """
    curve = {}
    for key, value in metrics.items():
        split, _, name = key.partition("/")
        if split in splits and name.startswith("seq_acc_by_len/"):
            curve[int(name.rpartition("/")[2])] = value
    return dict(sorted(curve.items()))


def plot_accuracy_by_length(
    curves: dict[str, dict[int, float]], path: Path, longest_trained: int | None = None
) -> Path:
    """Draw ``{label: {words: accuracy}}`` as lines into the PNG ``path``.

    ``longest_trained`` marks where the training lengths end with a dashed line.
    """
    figure = new_figure(7, 4)
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
    axes.legend(fontsize=8)
    return save_png(figure, path)


def read_sweep(sweep: Path) -> tuple[dict[str, dict], int | None]:
    """``{label: metrics}`` of the finished runs of a sweep, and the longest training length.

    A run is labelled by its positional encoding, or by its folder name where two runs
    share one (a sweep over more than positional encodings).
    """
    runs = sorted(p.parent for p in sweep.glob("*/metrics.json"))
    configs = {run: OmegaConf.load(run / "config_resolved.yaml") for run in runs}
    encodings = [configs[run].model.pos_encoding for run in runs]
    results = {}
    for run, encoding in zip(runs, encodings, strict=True):
        label = encoding if encodings.count(encoding) == 1 else run.name
        results[label] = json.loads((run / "metrics.json").read_text())
    lengths = {configs[run].data.max_len for run in runs}
    return results, lengths.pop() if len(lengths) == 1 else None


def markdown_table(results: dict[str, dict]) -> str:
    """One row per run: test and test_long ``seq_acc``, then accuracy at each long length."""
    long_lengths = sorted(
        {n for metrics in results.values() for n in accuracy_by_length(metrics, ("test_long",))}
    )
    header = ["positional encoding", "test seq_acc", "test_long seq_acc"]
    header += [f"{n} words" for n in long_lengths]
    lines = ["| " + " | ".join(header) + " |", "|---" + "|---:" * (len(header) - 1) + "|"]
    for label, metrics in results.items():
        curve = accuracy_by_length(metrics)
        cells = [metrics.get("test/seq_acc"), metrics.get("test_long/seq_acc")]
        cells += [curve.get(n) for n in long_lengths]
        row = [label] + ["–" if c is None else f"{c:.3f}" for c in cells]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sweep", type=Path, help="a multirun folder, e.g. outputs/multirun/<time>")
    parser.add_argument("--png", type=Path, help="default: <sweep>/accuracy_by_length.png")
    args = parser.parse_args(argv)
    results, longest_trained = read_sweep(args.sweep)
    if not results:
        sys.exit(f"error: no run folder with a metrics.json under {args.sweep}")
    print(markdown_table(results))
    curves = {label: accuracy_by_length(metrics) for label, metrics in results.items()}
    png = plot_accuracy_by_length(
        curves, args.png or args.sweep / "accuracy_by_length.png", longest_trained
    )
    print(f"\nfigure: {png}")


if __name__ == "__main__":
    main()
