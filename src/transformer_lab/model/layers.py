"""The feed-forward sublayer and the encoder and decoder layers built from sublayers."""

from collections.abc import Mapping
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from transformer_lab.config.registry import Registry
from transformer_lab.model.attention import KVCache, MultiHeadAttention
from transformer_lab.model.init import Sublayer, xavier_uniform_
from transformer_lab.model.options import ENCODER, Option, Stack, built
from transformer_lab.model.residual import Residual

# The FFNs by name: the network's keyword ``activation``, the config's ``model.ffn``.
FFNS = Registry("ffn")


def swiglu_hidden(d_ff: int) -> int:
    """SwiGLU's hidden width for a parameter budget comparable to a ``d_ff`` ReLU FFN.

    A gated FFN has three ``d_model x hidden`` matrices instead of two, so the hidden
    width is ``2/3 * d_ff`` (Shazeer, 2020), rounded up to a multiple of 8 for
    efficient matmuls: d_ff 2048 -> 1368, d_ff 256 -> 176.
    """
    return (2 * d_ff // 3 + 7) // 8 * 8


@FFNS.register("relu")
class FeedForward(Sublayer, Option):
    """Position-wise FFN ``W2 act(W1 x)`` with ReLU; the base every FFN overrides.

    Dropout follows the activation, as in ``torch.nn.Transformer``; the sublayer's output
    dropout belongs to :class:`~transformer_lab.model.residual.Residual`. ``stack`` and
    ``settings``: :meth:`~.options.Option.place`.
    """

    blocks = 1  # matrices fused in W1 (SwiGLU: W1 and V)

    def __init__(
        self, d_model: int, d_ff: int, dropout: float, *, stack: Stack = ENCODER, settings=None
    ):
        super().__init__()
        self.place(stack, settings)
        hidden = self.hidden_width(d_ff)
        self.w1 = nn.Linear(d_model, self.blocks * hidden)
        self.w2 = nn.Linear(hidden, d_model)
        self.dropout = nn.Dropout(dropout)

    @staticmethod
    def hidden_width(d_ff: int) -> int:
        return d_ff

    def act(self, h: torch.Tensor) -> torch.Tensor:
        """``W1 x [..., blocks * hidden]`` -> the activation ``[..., hidden]``."""
        return F.relu(h)

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        xavier_uniform_(self.w1, generator, blocks=self.blocks)
        xavier_uniform_(self.w2, generator)

    @torch.no_grad()
    def scale_branch_(self, beta: float) -> None:
        """Both matrices (W1 with SwiGLU's V), as DeepNet scales the FFN."""
        self.w1.weight.mul_(beta)
        self.w2.weight.mul_(beta)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(self.dropout(self.act(self.w1(x))))


@FFNS.register("gelu")
class GELUFeedForward(FeedForward):
    """``W2 gelu(W1 x)``."""

    def act(self, h: torch.Tensor) -> torch.Tensor:
        return F.gelu(h)


@FFNS.register("swiglu")
class SwiGLU(FeedForward):
    """``W2 (silu(W1 x) * V x)`` (Shazeer, 2020), W1 and V fused into one
    ``[2*hidden, d_model]`` projection, at the parameter budget of :func:`swiglu_hidden`."""

    blocks = 2

    @staticmethod
    def hidden_width(d_ff: int) -> int:
        return swiglu_hidden(d_ff)

    def act(self, h: torch.Tensor) -> torch.Tensor:
        gate, value = h.chunk(2, dim=-1)
        return F.silu(gate) * value


@FFNS.register("geglu")
class GEGLU(SwiGLU):
    """``W2 (gelu(W1 x) * V x)``: Shazeer's (2020) FFN_GEGLU (eq. 6), the best of Table 1
    ("The GEGLU and SwiGLU variants produce the best perplexities": 1.942 and 1.944 after
    65,536 steps, ReLU 1.997), fused and sized as :class:`SwiGLU`; with biases, as every
    projection here (the paper omits them)."""

    def act(self, h: torch.Tensor) -> torch.Tensor:
        gate, value = h.chunk(2, dim=-1)
        return F.gelu(gate) * value


@dataclass(frozen=True)
class LayerConfig:
    """Everything an encoder or decoder layer is built from, by name.

    ``norm``/``norm_type``/``alpha`` go to every :class:`Residual` of the layer, ``alpha``
    being deepnorm's residual weight (1 for the other placements). Every option is told the
    ``stack`` and given its own settings from ``options`` (name -> settings; an option left
    out: its defaults).
    """

    d_model: int
    num_heads: int
    d_ff: int
    dropout: float
    norm: str
    norm_type: str
    activation: str
    alpha: float = 1.0
    stack: Stack = ENCODER
    options: Mapping = field(default_factory=dict)

    def attention(self, cross: bool = False) -> MultiHeadAttention:
        return MultiHeadAttention(self.d_model, self.num_heads, self.dropout, cross=cross)

    def residual(self) -> Residual:
        return Residual(
            self.d_model,
            self.dropout,
            norm=self.norm,
            norm_type=self.norm_type,
            alpha=self.alpha,
            stack=self.stack,
            settings=self.options.get(self.norm_type),
        )

    def ffn(self) -> FeedForward:
        return built(
            FFNS.lookup(self.activation),
            self.d_model,
            self.d_ff,
            self.dropout,
            stack=self.stack,
            settings=self.options.get(self.activation),
        )


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
