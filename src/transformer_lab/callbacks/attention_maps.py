"""Attention heatmaps of fixed held-out examples, every N validations and at the end of fit.

For each of the first ``num_examples`` examples of the ``split`` (the same examples in every
run with the same data seed), the model runs with ``return_attention=True`` and every layer
of encoder self-attention, decoder self-attention (causal) and cross-attention becomes one
figure: its heads side by side, queries down, keys across, both labelled with the tokens.
Each goes to TensorBoard as ``attention/<kind>/layer<i>/example<e>`` and to
``<run>/attention/step<step>/<kind>_layer<i>_example<e>.png``.

On the reverse task a trained model's cross-attention shows the anti-diagonal: the output
at position i reads the source at position n-1-i.
"""

from pathlib import Path

import lightning as L
import torch
from lightning.pytorch.trainer.states import TrainerFn
from matplotlib.transforms import ScaledTranslation

from transformer_lab.callbacks.plotting import new_figure
from transformer_lab.callbacks.publishing import figure_hook, publish
from transformer_lab.config.validation import check_integer
from transformer_lab.tokens import PAD, SPECIAL_NAMES

# kind -> (what the queries are, what the keys are)
KINDS = {
    "encoder": ("source", "source"),
    "decoder_self": ("target", "target"),
    "cross": ("target", "source"),
}
CELL = 0.22  # inches per token
MARGINS = (0.55, 0.15, 0.5, 0.45)  # left, right, bottom, top, in inches
LABEL_GAP = 2 / 72  # inches (2 points) between a token's label and its cells


def label_offset(figure, x: int, y: int) -> ScaledTranslation:
    """A shift of :data:`LABEL_GAP` in the direction ``(x, y)``."""
    return ScaledTranslation(LABEL_GAP * x, LABEL_GAP * y, figure.dpi_scale_trans)


def token_labels(ids: torch.Tensor, label=None) -> list[str]:
    """Each id as an axis label: ``label(id)`` (the data's codec: the real tokens), or the
    special's name or the number."""
    label = label or (lambda i: SPECIAL_NAMES.get(int(i), str(int(i))))
    return [label(int(i)) for i in ids]


def attention_figure_size(num_heads: int, num_queries: int, num_keys: int) -> tuple[float, float]:
    """Width and height in inches: the heads' cells side by side, one empty column apart."""
    left, right, bottom, top = MARGINS
    width = CELL * (num_heads * (num_keys + 1) - 1)
    return left + width + right, bottom + CELL * num_queries + top


def attention_figure(weights: torch.Tensor, query_labels, key_labels, title: str):
    """``weights [H, L_q, L_k]`` as the heads' heatmaps side by side, on one 0..1 scale.

    One axes holds all heads (separated by a blank column), its tokens written as plain
    texts beside the cells: an axes per head with a colorbar costs about four times as much
    to draw for the same picture, and tick labels almost twice as much (a tick is five artists).
    A run draws these every few validations, for every layer of every kind.
    """
    num_heads, num_queries, num_keys = weights.shape
    width, height = attention_figure_size(num_heads, num_queries, num_keys)
    figure = new_figure(width, height, layout=None)
    left, right, bottom, top = MARGINS
    ax = figure.add_axes(
        (left / width, bottom / height, 1 - (left + right) / width, 1 - (bottom + top) / height)
    )
    gap = torch.full((num_heads, num_queries, 1), float("nan"))
    image = torch.cat((weights, gap), dim=2).permute(1, 0, 2).reshape(num_queries, -1)
    image = image[:, :-1]  # [L_q, H * (L_k + 1) - 1]: the heads side by side
    ax.imshow(image.numpy(), vmin=0.0, vmax=1.0, cmap="viridis", interpolation="nearest")
    ax.set_axis_off()
    below = ax.get_xaxis_transform() + label_offset(figure, 0, -1)  # x: a column; y: the axes'
    beside = ax.get_yaxis_transform() + label_offset(figure, -1, 0)  # y: a row; x: the axes'
    for head in range(num_heads):
        for key, label in enumerate(key_labels):
            x = head * (num_keys + 1) + key
            ax.text(x, 0, label, transform=below, rotation=90, ha="center", va="top", fontsize=6)
        ax.text(
            head * (num_keys + 1) + (num_keys - 1) / 2,
            -0.7,
            f"head {head}",
            ha="center",
            fontsize=7,
        )
    for query, label in enumerate(query_labels):
        ax.text(0, query, label, transform=beside, ha="right", va="center", fontsize=6)
    figure.suptitle(f"{title}  (weights 0..1)", fontsize=8, y=1 - 0.12 / height, va="top")
    return figure


class AttentionMaps(L.Callback):
    def __init__(self, every_n_validations: int = 5, num_examples: int = 2, split: str = "val"):
        check_integer("every_n_validations", every_n_validations, minimum=1)
        check_integer("num_examples", num_examples, minimum=1)
        self.every_n_validations = every_n_validations
        self.num_examples = num_examples
        self.split = split
        self._validations = 0
        self._drawn_at_step: int | None = None

    def on_validation_epoch_end(self, trainer, pl_module) -> None:
        if trainer.sanity_checking or trainer.state.fn != TrainerFn.FITTING:
            return
        self._validations += 1
        if self._validations % self.every_n_validations == 0:
            self.draw(trainer, pl_module)

    def on_fit_end(self, trainer, pl_module) -> None:
        if self._drawn_at_step != trainer.global_step:  # always end on the trained model
            self.draw(trainer, pl_module)

    @figure_hook
    def draw(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        batch = trainer.datamodule.sample(self.split, self.num_examples)
        src, tgt_in = batch["src"].to(pl_module.device), batch["tgt_in"].to(pl_module.device)
        was_training = pl_module.training
        pl_module.eval()
        with torch.no_grad():
            _, attention = pl_module.model(src, tgt_in, return_attention=True)
        pl_module.train(was_training)
        step = trainer.global_step
        folder = Path(trainer.default_root_dir) / "attention" / f"step{step:06d}"
        codecs = {"source": trainer.datamodule.src_codec, "target": trainer.datamodule.tgt_codec}
        for example in range(src.size(0)):
            tokens = {
                "source": src[example][src[example] != PAD].cpu(),
                "target": tgt_in[example][tgt_in[example] != PAD].cpu(),
            }
            for kind, (queries, keys) in KINDS.items():
                n_q, n_k = len(tokens[queries]), len(tokens[keys])
                for layer, weights in enumerate(attention[kind]):
                    figure = attention_figure(
                        weights[example, :, :n_q, :n_k].float().cpu(),
                        token_labels(tokens[queries], codecs[queries].token),
                        token_labels(tokens[keys], codecs[keys].token),
                        f"{kind} attention, layer {layer}, example {example}, step {step}",
                    )
                    name = f"{kind}/layer{layer}/example{example}"
                    png = folder / f"{name.replace('/', '_')}.png"
                    publish(trainer, f"attention/{name}", figure, step, png)
        self._drawn_at_step = step
