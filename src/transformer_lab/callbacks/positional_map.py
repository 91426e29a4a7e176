"""The run's positional encoding as one picture, so encodings can be compared by eye.

Each encoding says what to draw (its ``picture``, in :mod:`transformer_lab.model.positional`);
this callback lays out the panels, once per run: at fit start, or at fit end for an
encoding that is trained (at the start it is only the random init). ``none`` draws nothing.

A model whose stacks have encodings of their own (``model.encoder.pos_encoding``,
``model.decoder.pos_encoding``) gets one picture of each; a kind both stacks share is
drawn once, from the encoder.

TensorBoard tag ``positional/<name>``; ``<run>/positional_<name>.png``.
"""

import logging
from pathlib import Path

import lightning as L
import torch

from transformer_lab.callbacks.plotting import new_figure
from transformer_lab.callbacks.publishing import figure_hook, publish
from transformer_lab.model.positional import POSITIONAL_ENCODINGS, Panel, PositionalEncoding

log = logging.getLogger(__name__)


def _heatmap(figure, ax, panel: Panel) -> None:
    image = ax.imshow(
        panel.values.numpy(),
        vmin=panel.limits[0],
        vmax=panel.limits[1],
        cmap=panel.cmap,
        aspect="auto",
        interpolation="nearest",
    )
    ax.set_xlabel(panel.xlabel)
    ax.set_ylabel(panel.ylabel)
    ax.set_title(panel.title, fontsize=9)
    figure.colorbar(image, ax=ax, shrink=0.8)


@torch.no_grad()
def positional_figure(pos: PositionalEncoding, num_positions: int):
    """A figure of the first ``num_positions`` positions of ``pos``, or None for ``none``."""
    picture = pos.picture(min(num_positions, pos.max_len))
    if picture is None:
        return None
    figure = new_figure(*picture.size)
    axes = figure.subplots(1, len(picture.panels), squeeze=False)[0]
    for panel, ax in zip(picture.panels, axes, strict=True):
        _heatmap(figure, ax, panel)
    return figure


def stack_encodings(model) -> dict[str, PositionalEncoding]:
    """The model's positional encodings by name, the encoder's first: one per kind."""
    encodings = {}
    for pos in (model.src_pos, model.tgt_pos):
        name = POSITIONAL_ENCODINGS.name_of(pos)
        encodings.setdefault(name, pos)
    return encodings


class PositionalMap(L.Callback):
    """Logs :func:`positional_figure` of each encoding once per run: at fit start, or at
    fit end if trained."""

    def __init__(self, max_positions: int = 64):
        self.max_positions = max_positions

    def on_fit_start(self, trainer, pl_module) -> None:
        for name, pos in stack_encodings(pl_module.model).items():
            if not pos.trained:
                self.draw(trainer, name, pos)

    def on_fit_end(self, trainer, pl_module) -> None:
        for name, pos in stack_encodings(pl_module.model).items():
            if pos.trained:
                self.draw(trainer, name, pos)

    @figure_hook
    def draw(self, trainer: L.Trainer, name: str, pos: PositionalEncoding) -> None:
        figure = positional_figure(pos, self.max_positions)
        if figure is None:
            log.info("pos_encoding=%s: no positional encoding to draw", name)
            return
        png = Path(trainer.default_root_dir) / f"positional_{name}.png"
        publish(trainer, f"positional/{name}", figure, trainer.global_step, png)
