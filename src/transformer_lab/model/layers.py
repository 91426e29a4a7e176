"""The feed-forward sublayer and the encoder and decoder layers built from sublayers."""

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from transformer_lab.config.validation import check_choice
from transformer_lab.model.attention import KVCache, MultiHeadAttention
from transformer_lab.model.init import Sublayer, xavier_uniform_
from transformer_lab.model.residual import Residual

ACTIVATIONS = ("relu", "gelu", "swiglu")


def swiglu_hidden(d_ff: int) -> int:
    """SwiGLU's hidden width for a parameter budget comparable to a ``d_ff`` ReLU FFN.

    A gated FFN has three ``d_model x hidden`` matrices instead of two, so the hidden
    width is ``2/3 * d_ff`` (Shazeer, 2020), rounded up to a multiple of 8 for
    efficient matmuls: d_ff 2048 -> 1368, d_ff 256 -> 176.
    """
    return (2 * d_ff // 3 + 7) // 8 * 8


class FeedForward(Sublayer):
    """Position-wise FFN: ``W2 act(W1 x)``, or SwiGLU ``W2 (silu(W1 x) * V x)``.

    Dropout follows the activation, as in ``torch.nn.Transformer``; the sublayer's output
    dropout belongs to :class:`~transformer_lab.model.residual.Residual`.
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float, activation: str):
        super().__init__()
        check_choice("activation", activation, ACTIVATIONS)
        self.gated = activation == "swiglu"
        hidden = swiglu_hidden(d_ff) if self.gated else d_ff
        # For SwiGLU, W1 and V are fused into one [2*hidden, d_model] projection.
        self.w1 = nn.Linear(d_model, 2 * hidden if self.gated else hidden)
        self.w2 = nn.Linear(hidden, d_model)
        self.activation = F.gelu if activation == "gelu" else F.relu
        self.dropout = nn.Dropout(dropout)

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        xavier_uniform_(self.w1, generator, blocks=2 if self.gated else 1)
        xavier_uniform_(self.w2, generator)

    @torch.no_grad()
    def scale_branch_(self, beta: float) -> None:
        """Both matrices (W1 with SwiGLU's V), as DeepNet scales the FFN."""
        self.w1.weight.mul_(beta)
        self.w2.weight.mul_(beta)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.w1(x)
        if self.gated:
            gate, value = h.chunk(2, dim=-1)
            h = F.silu(gate) * value
        else:
            h = self.activation(h)
        return self.w2(self.dropout(h))


@dataclass(frozen=True)
class LayerConfig:
    """Everything an encoder or decoder layer is built from, by name.

    ``norm``/``norm_type``/``alpha`` go to every :class:`Residual` of the layer, ``alpha``
    being deepnorm's residual weight (1 for the other placements).
    """

    d_model: int
    num_heads: int
    d_ff: int
    dropout: float
    norm: str
    norm_type: str
    activation: str
    alpha: float = 1.0

    def attention(self, cross: bool = False) -> MultiHeadAttention:
        return MultiHeadAttention(self.d_model, self.num_heads, self.dropout, cross=cross)

    def residual(self) -> Residual:
        return Residual(
            self.d_model, self.dropout, norm=self.norm, norm_type=self.norm_type, alpha=self.alpha
        )

    def ffn(self) -> FeedForward:
        return FeedForward(self.d_model, self.d_ff, self.dropout, activation=self.activation)


class EncoderLayer(nn.Module):
    """Bidirectional self-attention over the source, then the FFN."""

    def __init__(self, config: LayerConfig):
        super().__init__()
        self.self_attn = config.attention()
        self.self_attn_residual = config.residual()
        self.ffn = config.ffn()
        self.ffn_residual = config.residual()

    def forward(self, x, mask, rotation=None, need_weights=False):
        """``x [B, S, D]`` -> ``([B, S, D], self-attention weights or None)``."""
        r = self.self_attn_residual
        h, weights = self.self_attn(r.inner(x), mask, rotation=rotation, need_weights=need_weights)
        x = r.outer(x, h)
        x = self.ffn_residual.outer(x, self.ffn(self.ffn_residual.inner(x)))
        return x, weights


class DecoderLayer(nn.Module):
    """Causal self-attention over the target prefix, cross-attention over the memory, FFN."""

    def __init__(self, config: LayerConfig):
        super().__init__()
        self.self_attn = config.attention()
        self.self_attn_residual = config.residual()
        self.cross_attn = config.attention(cross=True)
        self.cross_attn_residual = config.residual()
        self.ffn = config.ffn()
        self.ffn_residual = config.residual()

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        self_mask: torch.Tensor,
        memory_mask: torch.Tensor,
        rotation=None,
        self_cache: KVCache | None = None,
        cross_cache: KVCache | None = None,
        need_weights: bool = False,
    ):
        """``x [B, T, D]`` -> ``([B, T, D], self weights, cross weights)``."""
        r = self.self_attn_residual
        h, self_weights = self.self_attn(
            r.inner(x), self_mask, rotation=rotation, cache=self_cache, need_weights=need_weights
        )
        x = r.outer(x, h)
        r = self.cross_attn_residual
        h, cross_weights = self.cross_attn(
            r.inner(x), memory_mask, memory=memory, cache=cross_cache, need_weights=need_weights
        )
        x = r.outer(x, h)
        x = self.ffn_residual.outer(x, self.ffn(self.ffn_residual.inner(x)))
        return x, self_weights, cross_weights
