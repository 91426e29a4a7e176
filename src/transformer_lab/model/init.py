"""Weight initialisation, in one place.

Following the paper's reference implementations (tensor2tensor, fairseq):

- every projection matrix (attention Q, K, V, output; FFN W1, V, W2; the output head)
  is Xavier-uniform, biases zero. Fused projections (self-attention's ``[3D, D]`` Q/K/V,
  cross-attention's ``[2D, D]`` K/V, SwiGLU's ``[2h, D]`` W1/V) are initialised block by
  block, exactly as if each were its own ``nn.Linear``;
- token embeddings and a learned position table are ``N(0, d_model^-0.5)``: after the
  ``sqrt(d_model)`` scale each embedding component has unit variance. With tied
  embeddings the shared matrix gets this embedding init;
- LayerNorm weight 1, bias 0 (PyTorch's default).

A ``seed`` draws from a private generator, so two models built with the same seed and
sizes get identical weights whatever else has used the global RNG (the norm-comparison
twins rely on this).
"""

import torch
from torch import nn


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
        elif isinstance(module, nn.LayerNorm):
            module.reset_parameters()
