"""Where each claim holds: the map of a rule judged ``across`` cells of the grid
(:func:`~transformer_lab.sweep.hypotheses.expand_across`).

A claim tested at one hand-picked point says nothing of its neighbours, so a rule may be
judged in every cell of some swept keys (learning rate x depth, say): each cell is a rule of
the sweep's family, adjusted with all the others, and this section lays the cells out as
the map the reader asks for: per cell the effect with its interval and the verdict, and a
heatmap of the effect with each cell's verdict written in it. "Holds" means ``supported``
in that cell at the family's level; ``inconclusive`` cells are where the seeds did not
decide (a sweep still adding seeds says how many it has), not where the claim fails.
"""

from collections.abc import Sequence
from pathlib import Path

from matplotlib import colormaps
from matplotlib.colors import Normalize
from matplotlib.patches import Rectangle

from transformer_lab.callbacks.plotting import new_figure, save_png
from transformer_lab.report.comparisons import difference_cell, pairing_cell
from transformer_lab.report.proportions import RateDifference
from transformer_lab.report.verdicts import Verdict
from transformer_lab.runs.order import natural_key
from transformer_lab.training.metric_names import higher_is_better

COLOURS = colormaps["RdBu"]  # the predicted direction blue, the other red
MARKS = {"supported": "holds", "contradicted": "against"}


def by_claim(verdicts: Sequence[Verdict]) -> dict[str, list[Verdict]]:
    """The verdicts of cell rules, grouped by the rule they were expanded from."""
    claims: dict[str, list[Verdict]] = {}
    for verdict in verdicts:
        if verdict.hypothesis.base is not None:
            claims.setdefault(verdict.hypothesis.base, []).append(verdict)
    return claims


def tally(verdicts: Sequence[Verdict]) -> str:
    """``"supported in 3 of 12 cells, contradicted in 0, inconclusive in 9"``."""
    words = [v.word.split(" ")[0] for v in verdicts]
    counts = {w: words.count(w) for w in ("supported", "contradicted", "inconclusive")}
    return (
        f"supported in {counts['supported']} of {len(words)} cells, contradicted in "
        f"{counts['contradicted']}, inconclusive in {counts['inconclusive']}"
    )


def _predicted_sign(verdict: Verdict) -> float:
    """+1 where a positive A − B is what the rule predicts, -1 where a negative one is."""
    h = verdict.hypothesis
    towards_a = 1.0 if higher_is_better(verdict.comparison.metric) else -1.0
    return towards_a if h.predicted == "A better" else -towards_a


def cell_mark(verdict: Verdict) -> str:
    """What a heatmap cell says under its effect: "holds" or "against" where the cell is
    decided. An undecided count of learned runs whose two sides agree run for run says which
    way: "none learn" marks a regime that trains neither side (no evidence against the
    claim, and none for it), "all learn" one too easy to tell them apart; "?" is the rest."""
    if verdict.word in MARKS:
        return MARKS[verdict.word]
    found = verdict.comparison.difference
    if isinstance(found, RateDifference):
        if found.k_a == found.k_b == 0:
            return "none learn"
        if (found.k_a, found.k_b) == (found.n_a, found.n_b):
            return "all learn"
    return "?"


def claim_lines(base: str, verdicts: Sequence[Verdict]) -> list[str]:
    """One claim's table: a row per cell."""
    h = verdicts[0].hypothesis
    keys = [k for k, _ in h.cell]
    a, b = h.values
    lines = [
        "",
        f"### `{base}`: {h.claim}",
        "",
        f"{h.source}. `{h.metric}` of {h.key}={a} (A) against {h.key}={b} (B), predicted "
        f"{h.predicted}; {tally(verdicts)}.",
        "",
        f"| {' | '.join(f'`{k}`' for k in keys)} | A − B [95% interval] | runs | p (Holm) | "
        "verdict |",
        f"|{' --- |' * (len(keys) + 4)}",
    ]
    for v in sorted(verdicts, key=lambda v: [natural_key(x) for _, x in v.hypothesis.cell]):
        values = " | ".join(x for _, x in v.hypothesis.cell)
        lines.append(
            f"| {values} | {difference_cell(v.comparison)} | {pairing_cell(v.comparison)} | "
            f"{v.p:.3g} ({v.adjusted:.3g}) | {v.word} |"
        )
    return lines


def claim_heatmap(base: str, verdicts: Sequence[Verdict], folder: Path) -> tuple[str, str] | None:
    """A heatmap of the effect over two across keys (rows the first), each cell's verdict
    written in it; None for a rule across one key or more than two."""
    keys = [k for k, _ in verdicts[0].hypothesis.cell]
    if len(keys) != 2:
        return None
    rows = sorted({dict(v.hypothesis.cell)[keys[0]] for v in verdicts}, key=natural_key)
    columns = sorted({dict(v.hypothesis.cell)[keys[1]] for v in verdicts}, key=natural_key)
    figure = new_figure(1.8 + 1.3 * len(columns), 1.4 + 0.55 * len(rows))
    ax = figure.subplots()
    norm = Normalize(-1.0, 1.0)
    for v in verdicts:
        cell = dict(v.hypothesis.cell)
        i, j = rows.index(cell[keys[0]]), columns.index(cell[keys[1]])
        found = v.comparison.difference
        towards = None if found is None else _predicted_sign(v) * found.estimate
        colour = "lightgrey" if towards is None else COLOURS(norm(max(-1.0, min(1.0, towards))))
        ax.add_patch(
            Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor=colour, edgecolor="black", lw=0.5)
        )
        mark = cell_mark(v)
        text = mark if towards is None else f"{towards:+.2f}\n{mark}"
        dark = towards is not None and abs(towards) > 0.6
        ax.text(j, i, text, ha="center", va="center", fontsize=7, color="white" if dark else "k")
    ax.set(xlim=(-0.5, len(columns) - 0.5), ylim=(-0.5, len(rows) - 0.5))
    ax.set_xticks(range(len(columns)), columns)
    ax.set_yticks(range(len(rows)), rows)
    ax.set(xlabel=keys[1], ylabel=keys[0])
    ax.set_title(f"{base}: effect in the predicted direction", fontsize=8)
    name = f"region_{base}.png"
    save_png(figure, folder / name)
    return f"Where `{base}` holds (blue: the predicted direction)", name


def regions_section(
    verdicts: Sequence[Verdict], folder: Path
) -> tuple[list[str], list[tuple[str, str]]]:
    """The section's lines and its heatmaps ``[(caption, file)]``, written into ``folder``;
    nothing for a sweep without rules across cells."""
    claims = by_claim(verdicts)
    if not claims:
        return [], []
    lines = [
        "",
        "## Where each claim holds",
        "",
        "Each rule below was judged in every cell of the keys it runs across, every cell a "
        "rule of the sweep's family (Holm over both directions of all of them). A cell "
        "`supported` is where the claim holds at the family's level; `inconclusive` is where "
        "the seeds did not decide, not evidence against it. The effect is A − B with its 95% "
        "interval (Newcombe's for rates of learning). A heatmap writes `holds` or `against` "
        "in a decided cell; in an undecided one, `none learn` where neither side learned in "
        "any run (a regime that trains neither), `all learn` where both did in every run, "
        "and `?` otherwise.",
    ]
    figures = []
    for base, found in claims.items():
        lines += claim_lines(base, found)
        heatmap = claim_heatmap(base, found, folder)
        if heatmap:
            figures.append(heatmap)
            lines += ["", f"![{heatmap[0]}]({heatmap[1]})"]
    return lines, figures
