"""Weight initialisation, in one place.

Following the paper's reference implementations (tensor2tensor, fairseq):

- every projection matrix (attention Q, K, V, output; FFN W1, V, W2; the output head)
  is Xavier-uniform, biases zero. Fused projections (self-attention's ``[3D, D]`` Q/K/V,
  cross-attention's ``[2D, D]`` K/V, SwiGLU's ``[2h, D]`` W1/V) are initialised block by
  block, exactly as if each were its own ``nn.Linear``;
- token embeddings and a learned position table are ``N(0, d_model^-0.5)``: after the
  ``sqrt(d_model)`` scale each embedding component has unit variance. With tied
  embeddings the shared matrix gets this embedding init;
- LayerNorm weight 1, bias 0; RMSNorm weight 1 (PyTorch's defaults);
- with ``norm="deepnorm"``, :func:`scale_residual_branches` then multiplies the value and
  output projections of attention and both FFN matrices by DeepNet's ``beta`` (Wang et
  al., 2022), i.e. Xavier with gain ``beta``; queries and keys keep gain 1.

A ``seed`` draws from a private generator, so two models built with the same seed and
sizes get identical weights whatever else has used the global RNG (the norm-comparison
twins rely on this).
"""

import torch
from torch import nn

from transformer_lab.model.attention import MultiHeadAttention
from transformer_lab.model.layers import FeedForward


def _xavier_blocks(linear: nn.Linear, generator) -> None:
    """Xavier-uniform per stacked matrix (``fused_blocks`` is set where a projection is fused)."""
    for block in linear.weight.chunk(getattr(linear, "fused_blocks", 1), dim=0):
        nn.init.xavier_uniform_(block, generator=generator)


@torch.no_grad()
def initialize(model: nn.Module, d_model: int, seed: int | None = None) -> None:
    generator = torch.Generator().manual_seed(seed) if seed is not None else None
    for module in model.modules():
        if isinstance(module, nn.Linear):
            _xavier_blocks(module, generator)
            if module.bias is not None:
                module.bias.zero_()
    # Embeddings last, so that a weight tied to the output head ends with the embedding init.
    for module in model.modules():
        if isinstance(module, nn.Embedding):
            module.weight.normal_(0.0, d_model**-0.5, generator=generator)
        elif isinstance(module, nn.LayerNorm | nn.RMSNorm):
            module.reset_parameters()


@torch.no_grad()
def scale_residual_branches(layers: nn.Module, beta: float) -> None:
    """DeepNet's init: shrink what a residual branch adds, by ``beta``, in every layer.

    Scaling after the Xavier draw equals drawing with gain ``beta``, so a deepnorm model
    and a post-norm model with the same ``init_seed`` differ by exactly these factors.
    """
    if beta == 1.0:
        return
    for module in layers.modules():
        if isinstance(module, FeedForward):
            module.w1.weight.mul_(beta)
            module.w2.weight.mul_(beta)
        elif isinstance(module, MultiHeadAttention):
            fused = module.kv_proj if module.cross else module.in_proj  # V is the last block
            fused.weight.chunk(fused.fused_blocks, dim=0)[-1].mul_(beta)
            module.out_proj.weight.mul_(beta)
