"""The run's positional encoding as one picture, so encodings can be compared by eye.

- ``sinusoidal``: the table, position x dimension, on a -1..1 colour scale: fast
  oscillations in the first dimensions, slow ones in the last.
- ``learned``: the trained table, same layout, on a symmetric scale; drawn at the end of
  fit (at the start it is only the random init).
- ``rotary``: what rotation alone does to attention: the score of one and the same vector
  as query at position i and as key at position j, ``mean_d cos((i - j) theta_d)``, -1..1.
  It depends on ``i - j`` only.
- ``alibi``: each head's bias ``-slope_h |i - j|`` on self-attention scores, each head on
  its own scale since the slopes differ by powers of two (the encoder's symmetric form;
  the decoder's causal mask keeps ``j <= i``).
- ``none``: nothing to draw.

A model whose stacks have encodings of their own (``model.encoder_pos_encoding``,
``model.decoder_pos_encoding``) gets one picture of each; a kind both stacks share is
drawn once, from the encoder.

TensorBoard tag ``positional/<name>``; ``<run>/positional_<name>.png``.
"""

import logging
from pathlib import Path

import lightning as L
import torch

from transformer_lab.callbacks.plotting import figure_hook, new_figure, publish
from transformer_lab.model.positional import (
    POSITIONAL_ENCODINGS,
    ALiBi,
    Learned,
    PositionalEncoding,
    Rotary,
    Sinusoidal,
    rotate,
)

log = logging.getLogger(__name__)


def _heatmap(figure, ax, values, limits, xlabel, ylabel, title, cmap="RdBu_r") -> None:
    image = ax.imshow(
        values.numpy(),
        vmin=limits[0],
        vmax=limits[1],
        cmap=cmap,
        aspect="auto",
        interpolation="nearest",
    )
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    figure.colorbar(image, ax=ax, shrink=0.8)


@torch.no_grad()
def positional_figure(pos: PositionalEncoding, num_positions: int):
    """A figure of the first ``num_positions`` positions of ``pos``, or None for ``none``."""
    n = min(num_positions, pos.max_len)
    if isinstance(pos, Sinusoidal | Learned):
        table = (pos.table if isinstance(pos, Sinusoidal) else pos.table.weight)[:n].float().cpu()
        limit = 1.0 if isinstance(pos, Sinusoidal) else table.abs().max().item()
        figure = new_figure(7.0, 5.0)
        kind = "sinusoidal" if isinstance(pos, Sinusoidal) else "learned"
        _heatmap(
            figure,
            figure.subplots(),
            table,
            (-limit, limit),
            "dimension",
            "position",
            f"{kind} positional encoding [position x dimension]",
        )
        return figure
    if isinstance(pos, Rotary):
        head_dim = 2 * pos.cos.size(-1)
        positions = torch.arange(n, device=pos.cos.device)
        ones = torch.ones(1, 1, n, head_dim, device=positions.device)  # [1, 1, L, Dh]
        rotated = rotate(ones, pos.rotation(positions))[0, 0]  # [L, Dh]
        similarity = (rotated @ rotated.T / head_dim).cpu()  # [L, L]
        figure = new_figure(6.0, 5.0)
        _heatmap(
            figure,
            figure.subplots(),
            similarity,
            (-1.0, 1.0),
            "key position",
            "query position",
            "rotary: score of one vector at positions i, j",
        )
        return figure
    if isinstance(pos, ALiBi):
        positions = torch.arange(n, device=pos.slopes.device)
        bias = pos.bias(positions, positions).cpu()  # [H, L, L]
        heads = bias.size(0)
        figure = new_figure(2.6 * heads + 0.8, 3.0)
        for head, ax in enumerate(figure.subplots(1, heads, squeeze=False)[0]):
            _heatmap(
                figure,
                ax,
                bias[head],
                (bias[head].min().item(), 0.0),
                "key position",
                "query position" if head == 0 else "",
                f"ALiBi head {head}: bias",
                cmap="Blues_r",
            )
        return figure
    return None


def stack_encodings(model) -> dict[str, PositionalEncoding]:
    """The model's positional encodings by name, the encoder's first: one per kind."""
    encodings = {}
    for pos in (model.src_pos, model.tgt_pos):
        name = next(n for n, cls in POSITIONAL_ENCODINGS.items() if type(pos) is cls)
        encodings.setdefault(name, pos)
    return encodings


class PositionalMap(L.Callback):
    """Logs :func:`positional_figure` of each encoding once per run: at fit start, or at
    fit end if learned."""

    def __init__(self, max_positions: int = 64):
        self.max_positions = max_positions

    def on_fit_start(self, trainer, pl_module) -> None:
        for name, pos in stack_encodings(pl_module.model).items():
            if not isinstance(pos, Learned):
                self.draw(trainer, name, pos)

    def on_fit_end(self, trainer, pl_module) -> None:
        for name, pos in stack_encodings(pl_module.model).items():
            if isinstance(pos, Learned):
                self.draw(trainer, name, pos)

    @figure_hook
    def draw(self, trainer: L.Trainer, name: str, pos: PositionalEncoding) -> None:
        figure = positional_figure(pos, self.max_positions)
        if figure is None:
            log.info("pos_encoding=%s: no positional encoding to draw", name)
            return
        png = Path(trainer.default_root_dir) / f"positional_{name}.png"
        publish(trainer, f"positional/{name}", figure, trainer.global_step, png)
