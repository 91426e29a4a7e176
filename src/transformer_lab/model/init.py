"""Weight initialisation: the scheme in one place, each fused projection owned by its module.

Following the paper's reference implementations (tensor2tensor, fairseq):

- every projection matrix (attention Q, K, V, output; FFN W1, V, W2; the output head)
  is Xavier-uniform, biases zero. Fused projections (self-attention's ``[3D, D]`` Q/K/V,
  cross-attention's ``[2D, D]`` K/V, SwiGLU's ``[2h, D]`` W1/V) are initialised block by
  block, exactly as if each were its own ``nn.Linear``; only the module that fuses them
  knows the blocks, so it is a :class:`Sublayer` and initialises itself;
- every other module with parameters owns its init (:class:`OwnsInit`), drawn after the
  projections: token embeddings ``N(0, d_model^-0.5)``
  (:class:`~transformer_lab.model.embedding.TokenEmbedding`; with tied embeddings the
  shared matrix keeps it), a learned position table ``N(0, 1/2)``, the sinusoid's scale
  (:class:`~transformer_lab.model.positional.PositionTable`, which says why), each norm
  type its PyTorch default (:mod:`~transformer_lab.model.norms`);
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


class OwnsInit:
    """A module outside any :class:`Sublayer` that initialises what it holds:
    ``reset_parameters(generator)``, run after every projection (token embeddings, a
    learned position table, the norms). A module with parameters that is none of
    ``Sublayer``, ``nn.Linear`` or this gets no init by default: :func:`initialize`
    refuses it, so a new embedding cannot take the token embeddings' init unnoticed."""


def _owners(module: nn.Module):
    """The modules that initialise ``module``'s parameters, in the order of
    ``model.modules()``, so draws from a generator come in a fixed order."""
    if isinstance(module, Sublayer | nn.Linear | OwnsInit):
        yield module
        return
    if next(module.parameters(recurse=False), None) is not None:
        raise TypeError(
            f"{type(module).__name__} holds parameters but no init: make it a Sublayer "
            "or an OwnsInit with reset_parameters(generator)"
        )
    for child in module.children():
        yield from _owners(child)


@torch.no_grad()
def initialize(model: nn.Module, seed: int | None = None) -> None:
    generator = torch.Generator().manual_seed(seed) if seed is not None else None
    owners = list(_owners(model))
    for module in owners:
        if isinstance(module, Sublayer):
            module.reset_parameters(generator)
        elif isinstance(module, nn.Linear):
            xavier_uniform_(module, generator)
    # Embeddings last, so that a weight tied to the output head ends with the embedding init.
    for module in owners:
        if isinstance(module, OwnsInit):
            module.reset_parameters(generator)


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
