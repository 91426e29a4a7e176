"""One benchmark result per row, printed as a table and written as JSON.

Every row compares *ours* against a *peer* in one unit, and ``ratio = ours / peer``. The
row's name says what the two sides are and which direction is better ("higher is
better" for rates, "lower is better" for memory), so a ratio reads without a legend.
A row that could not be measured keeps its name with ``ours = peer = ratio = None``
and says why in the name.
"""

import json
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table


@dataclass
class Row:
    name: str
    ours: float | None
    peer: float | None
    unit: str

    @property
    def ratio(self) -> float | None:
        if self.ours is None or self.peer is None:
            return None
        return self.ours / self.peer

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "ours": self.ours,
            "peer": self.peer,
            "unit": self.unit,
            "ratio": self.ratio,
        }


def unavailable(name: str, unit: str, why: str) -> Row:
    """A row for something this machine cannot run, instead of a crash."""
    return Row(f"{name} [unavailable: {why}]", None, None, unit)


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    if abs(value) >= 1e5:
        return f"{value:.3g}"
    return f"{value:,.1f}" if abs(value) >= 10 else f"{value:.3f}"


def _ratio(row: Row) -> str:
    return "-" if row.ratio is None else f"{row.ratio:.3g}x"


def print_table(rows: list[Row], title: str) -> None:
    table = Table(title=title)
    for column in ("benchmark (ours / peer)", "ours", "peer", "unit", "ratio"):
        table.add_column(column, justify="left" if column.startswith("bench") else "right")
    for row in rows:
        table.add_row(escape(row.name), _number(row.ours), _number(row.peer), row.unit, _ratio(row))
    Console(width=160).print(table)


def write_json(rows: list[Row], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([row.as_dict() for row in rows], indent=2) + "\n")


def write_markdown(rows: list[Row], path: Path) -> None:
    """The table as Markdown, for docs/performance.md."""
    lines = ["| benchmark (ours / peer) | ours | peer | unit | ratio |", "|---|--:|--:|--:|--:|"]
    for row in rows:
        cells = (row.name, _number(row.ours), _number(row.peer), row.unit, _ratio(row))
        lines.append("| " + " | ".join(cells) + " |")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
