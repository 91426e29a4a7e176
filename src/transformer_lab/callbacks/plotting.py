"""One way to make a figure and write it as a PNG, for the callbacks (which publish it to a
run's loggers too: :mod:`.publishing`), the report and the papers' figures alike; free of
Lightning, so that the reading tools start without it.

Figures are built with ``matplotlib.figure.Figure`` and rendered by the Agg canvas, never
through ``pyplot``: nothing global is switched (a notebook importing the package keeps its
backend), no window opens on a headless machine, and a figure needs no closing.
The TensorBoard image and the PNG have the same pixels: ``size_inches * dpi``.
"""

from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from transformer_lab.records import write_atomically

DPI = 80


def new_figure(width: float, height: float, layout: str | None = "constrained") -> Figure:
    """A figure of ``width x height`` inches (constrained layout unless placed by hand)."""
    return Figure(figsize=(width, height), dpi=DPI, layout=layout)


def to_image(figure: Figure) -> np.ndarray:
    """The rendered figure, ``[H, W, 3]`` uint8."""
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()


def save_png(figure: Figure, path: Path) -> Path:
    """``figure`` as a PNG at ``path``, whole or not at all (:mod:`transformer_lab.records`)."""
    return write_atomically(path, FigureCanvasAgg(figure).print_png, f"the figure {path.name}")
