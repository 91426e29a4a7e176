"""Every attention mask of the model, in one convention.

Inside the project a boolean mask means **True = may attend** (the convention of
``F.scaled_dot_product_attention``). Masks are built once per stack and broadcast as
``[B, 1, L_q, L_k]`` over heads. ``nn.MultiheadAttention`` uses the opposite convention
(True = blocked); :func:`to_blocked` is the one place that converts.
"""

import torch

from transformer_lab.tokens import PAD


def key_padding(tokens: torch.Tensor) -> torch.Tensor:
    """``[B, L]`` token ids -> ``[B, 1, 1, L]``: True where the key is a real token."""
    return (tokens != PAD)[:, None, None, :]


def causal(q_positions: torch.Tensor, k_positions: torch.Tensor) -> torch.Tensor:
    """``[L_q, L_k]``: a query at absolute position i may attend keys at positions <= i.

    Positions are absolute, so the same rule serves a full pass (both ``0..T-1``) and one
    cached decoding step (query ``t``, keys ``0..t``).
    """
    return k_positions[None, :] <= q_positions[:, None]


def combine(padding: torch.Tensor, causal_mask: torch.Tensor | None = None) -> torch.Tensor:
    """Key padding ``[B,1,1,L_k]`` and an optional causal ``[L_q,L_k]`` -> ``[B,1,L_q|1,L_k]``."""
    return padding if causal_mask is None else padding & causal_mask


def with_bias(mask: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """Fold an additive per-head bias ``[H,L_q,L_k]`` (ALiBi) into the mask.

    Returns the boolean mask unchanged when there is no bias, else a float mask
    ``[B,H,L_q,L_k]`` with ``-inf`` where attention is not allowed.
    """
    if bias is None:
        return mask
    return bias.masked_fill(~mask, float("-inf"))


def to_blocked(mask: torch.Tensor) -> torch.Tensor:
    """Convert True = may attend into ``nn.MultiheadAttention``'s True = blocked."""
    return ~mask
