"""Where the LayerNorm sits around a residual sublayer: the post-norm / pre-norm switch.

- ``post`` (Vaswani et al., 2017): ``LayerNorm(x + Dropout(F(x)))``.
- ``pre`` (Xiong et al., 2020; fairseq ``normalize_before``): ``x + Dropout(F(LayerNorm(x)))``;
  the stack then ends with one final LayerNorm (see :func:`final_norm`), since its
  residual stream is never normalised otherwise. Post-norm stacks get none, unlike
  ``torch.nn.Transformer``, which always appends one.

A layer calls :meth:`Residual.inner` on the sublayer's input and :meth:`Residual.outer`
to merge the sublayer's output back, so one class owns the whole placement.
"""

import torch
from torch import nn

NORM_PLACEMENTS = ("post", "pre")


def check_norm(norm: str) -> None:
    if norm not in NORM_PLACEMENTS:
        raise ValueError(f"unknown norm={norm!r}; allowed: {', '.join(NORM_PLACEMENTS)}")


class Residual(nn.Module):
    """One sublayer's residual connection, its dropout and its LayerNorm placement."""

    def __init__(self, d_model: int, dropout: float, norm: str):
        super().__init__()
        check_norm(norm)
        self.pre = norm == "pre"
        self.norm = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def inner(self, x: torch.Tensor) -> torch.Tensor:
        """The sublayer's input."""
        return self.norm(x) if self.pre else x

    def outer(self, x: torch.Tensor, sublayer_out: torch.Tensor) -> torch.Tensor:
        """The residual stream after the sublayer."""
        y = x + self.dropout(sublayer_out)
        return y if self.pre else self.norm(y)


def final_norm(d_model: int, norm: str) -> nn.Module:
    """The LayerNorm that closes a stack: only pre-norm needs one."""
    check_norm(norm)
    return nn.LayerNorm(d_model) if norm == "pre" else nn.Identity()
