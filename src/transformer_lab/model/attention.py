"""Multi-head attention with its own projections, two equivalent paths and a KV cache.

The fast path calls ``F.scaled_dot_product_attention`` (fused kernels, no weights
materialised for the caller). The explicit path computes ``softmax(QK^T/sqrt(d)) V`` by
hand and returns the per-head weights ``[B, H, L_q, L_k]`` that the attention-map
callbacks draw. Both take the same mask (True = may attend, or a float mask with ``-inf``
where blocked) and give the same outputs; a query row with no allowed key yields zeros
on both paths rather than NaN.
"""

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from transformer_lab.model.init import Sublayer, xavier_uniform_
from transformer_lab.model.positional import rotate


@dataclass
class KVCache:
    """Keys and values ``[B, H, T, Dh]`` already computed for one attention layer.

    For decoder self-attention they grow by one step per generated token; for
    cross-attention they are the projected encoder memory, computed once.
    """

    k: torch.Tensor | None = None
    v: torch.Tensor | None = None

    def reorder(self, index: torch.Tensor) -> None:
        """Keep rows ``index`` of the batch (beam search reorders hypotheses this way)."""
        if self.k is not None:
            self.k, self.v = self.k.index_select(0, index), self.v.index_select(0, index)


def attend(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None,
    dropout: float,
    need_weights: bool,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Scaled dot-product attention over ``[B, H, L, Dh]`` tensors."""
    if not need_weights:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout), None
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # [B, H, L_q, L_k]
    if mask is not None:
        if mask.dtype == torch.bool:
            scores = scores.masked_fill(~mask, float("-inf"))
        else:
            scores = scores + mask
    weights = scores.softmax(dim=-1)
    if mask is not None:  # a row with every key blocked attends to nothing, like SDPA
        weights = weights.masked_fill(torch.isneginf(scores).all(-1, keepdim=True), 0.0)
    return F.dropout(weights, dropout, training=dropout > 0) @ v, weights


class MultiHeadAttention(Sublayer):
    """Self-attention (one fused Q/K/V projection) or cross-attention (Q, then fused K/V).

    Fusing the projections is a speed choice only: the Q, K and V weights are the row
    blocks ``[0:D], [D:2D], [2D:3D]`` of ``in_proj`` (K and V those of ``kv_proj``), as in
    ``nn.MultiheadAttention``; :meth:`reset_parameters` initialises each block as its own
    matrix.
    """

    def __init__(self, d_model: int, num_heads: int, dropout: float, cross: bool = False):
        super().__init__()
        self.num_heads = num_heads
        self.dropout = dropout
        self.cross = cross
        if cross:
            self.q_proj = nn.Linear(d_model, d_model)
            self.kv_proj = nn.Linear(d_model, 2 * d_model)
        else:
            self.in_proj = nn.Linear(d_model, 3 * d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def _fused(self) -> tuple[nn.Linear, int]:
        """The projection holding V and how many matrices it stacks (V is the last)."""
        return (self.kv_proj, 2) if self.cross else (self.in_proj, 3)

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        fused, blocks = self._fused()
        if self.cross:
            xavier_uniform_(self.q_proj, generator)
        xavier_uniform_(fused, generator, blocks)
        xavier_uniform_(self.out_proj, generator)

    @torch.no_grad()
    def scale_branch_(self, beta: float) -> None:
        """Values and output projection; Q and K only set where to attend, not how much."""
        fused, blocks = self._fused()
        fused.weight.chunk(blocks, dim=0)[-1].mul_(beta)
        self.out_proj.weight.mul_(beta)

    def _heads(self, x: torch.Tensor, parts: int) -> tuple[torch.Tensor, ...]:
        """``[B, L, parts*D]`` -> ``parts`` tensors ``[B, H, L, Dh]``."""
        b, length, width = x.shape
        x = x.view(b, length, parts, self.num_heads, width // (parts * self.num_heads))
        return x.permute(2, 0, 3, 1, 4).unbind(0)

    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor | None,
        memory: torch.Tensor | None = None,
        rotation: tuple[torch.Tensor, torch.Tensor] | None = None,
        cache: KVCache | None = None,
        need_weights: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``x [B, L_q, D]`` -> ``([B, L_q, D], weights [B, H, L_q, L_k] or None)``.

        ``memory [B, S, D]`` is the encoder output for cross-attention. ``rotation`` holds
        rotary ``(cos, sin)`` for the new positions. With a ``cache``, self-attention appends
        its new keys/values and attends over all of them; cross-attention projects the
        memory only the first time.
        """
        if self.cross:
            (q,) = self._heads(self.q_proj(x), 1)
            if cache is not None and cache.k is not None:
                k, v = cache.k, cache.v
            else:
                k, v = self._heads(self.kv_proj(memory), 2)
                if cache is not None:
                    cache.k, cache.v = k, v
        else:
            q, k, v = self._heads(self.in_proj(x), 3)
            if rotation is not None:
                q, k = rotate(q, rotation), rotate(k, rotation)
            if cache is not None:
                if cache.k is not None:
                    k, v = torch.cat((cache.k, k), dim=2), torch.cat((cache.v, v), dim=2)
                cache.k, cache.v = k, v
        dropout = self.dropout if self.training else 0.0
        out, weights = attend(q, k, v, mask, dropout, need_weights)
        b, _, length, _ = out.shape
        return self.out_proj(out.transpose(1, 2).reshape(b, length, -1)), weights
