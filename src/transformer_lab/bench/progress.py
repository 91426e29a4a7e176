"""The bench's sign of life: the full run takes minutes, so each timed row shows a bar of
its rounds as it runs (rich, like the training progress bar), and stays listed when done.

One display for the whole process, started by ``python -m transformer_lab.bench``; when
nothing started it (a test calling a row directly) the rows run without drawing anything.
"""

from collections.abc import Iterable

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

DISPLAY = Progress(
    TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()
)


def rounds(n: int, row: str) -> Iterable[int]:
    """``range(n)``, each step shown as one round of ``row``."""
    return DISPLAY.track(range(n), total=n, description=row)
