"""Weight initialisation: the scheme in one place, each fused projection owned by its module.

Following the paper's reference implementations (tensor2tensor, fairseq):

- every projection matrix (attention Q, K, V, output; FFN W1, V, W2; the output head)
  is Xavier-uniform, biases zero. Fused projections (self-attention's ``[3D, D]`` Q/K/V,
  cross-attention's ``[2D, D]`` K/V, SwiGLU's ``[2h, D]`` W1/V) are initialised block by
  block, exactly as if each were its own ``nn.Linear``; only the module that fuses them
  knows the blocks, so it is a :class:`Sublayer` and initialises itself;
- token embeddings are ``N(0, d_model^-0.5)``: after the ``sqrt(d_model)`` scale each
  embedding component has unit variance. With tied embeddings the shared matrix gets
  this embedding init;
- a learned position table is ``N(0, 1/2)``, the sinusoid's scale; it owns that init
  (:class:`~transformer_lab.model.positional.PositionTable`, which says why);
- LayerNorm weight 1, bias 0; RMSNorm weight 1 (PyTorch's defaults);
- with ``norm="deepnorm"``, :func:`scale_residual_branches` then multiplies what each
  sublayer adds to the residual stream (attention's value and output projections, both
  FFN matrices) by DeepNet's ``beta`` (Wang et al., 2022), i.e. Xavier with gain
  ``beta``; queries and keys keep gain 1.

A ``seed`` draws from a private generator, so two models built with the same seed and
sizes get identical weights whatever else has used the global RNG (the norm-comparison
twins rely on this).
"""

import torch
from torch import nn

from transformer_lab.model.positional import PositionTable


@torch.no_grad()
def xavier_uniform_(linear: nn.Linear, generator: torch.Generator | None, blocks: int = 1) -> None:
    """Xavier-uniform for each of ``blocks`` stacked row blocks of the weight; zero bias."""
    for block in linear.weight.chunk(blocks, dim=0):
        nn.init.xavier_uniform_(block, generator=generator)
    if linear.bias is not None:
        linear.bias.zero_()


class Sublayer(nn.Module):
    """A residual branch (attention or FFN) that owns the init of its projections.

    Subclasses fuse projections into one ``nn.Linear`` for speed, so they alone know
    where one matrix ends and the next begins.
    """

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """Every projection Xavier-uniform block by block, biases zero, in module order."""
        raise NotImplementedError

    def scale_branch_(self, beta: float) -> None:
        """Multiply the weights that set the size of the branch's output by ``beta``."""
        raise NotImplementedError


def _init_projections(module: nn.Module, generator: torch.Generator | None) -> None:
    """Xavier for every projection, visiting modules in the order of ``model.modules()``
    so the draws from ``generator`` come in a fixed order; a Sublayer does its own."""
    if isinstance(module, Sublayer):
        module.reset_parameters(generator)
    elif isinstance(module, nn.Linear):
        xavier_uniform_(module, generator)
    else:
        for child in module.children():
            _init_projections(child, generator)


@torch.no_grad()
def initialize(model: nn.Module, d_model: int, seed: int | None = None) -> None:
    generator = torch.Generator().manual_seed(seed) if seed is not None else None
    _init_projections(model, generator)
    # Embeddings last, so that a weight tied to the output head ends with the embedding init.
    for module in model.modules():
        if isinstance(module, PositionTable):
            module.reset_parameters(generator)
        elif isinstance(module, nn.Embedding):
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
        if isinstance(module, Sublayer):
            module.scale_branch_(beta)
