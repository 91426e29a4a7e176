"""The norm types, by name (``model.norm_type``): what a norm placement puts in its place.

Each is a module over the last dimension built from ``d_model`` that owns its initialisation
(:class:`~transformer_lab.model.init.OwnsInit`); eps 1e-5 for each. A norm type that needs its
stack or settings of its own subclasses :class:`~.options.Option` as well.
"""

import math

import torch
from torch import nn

from transformer_lab.config.registry import Registry
from transformer_lab.model.init import OwnsInit

NORM_TYPES = Registry("norm_type")
EPS = 1e-5


@NORM_TYPES.register("layernorm")
class LayerNorm(nn.LayerNorm, OwnsInit):
    """Centre, scale by the standard deviation, learned gain (1) and bias (0)."""

    def __init__(self, d_model: int):
        super().__init__(d_model, eps=EPS)

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        super().reset_parameters()


@NORM_TYPES.register("rmsnorm")
class RMSNorm(nn.RMSNorm, OwnsInit):
    """Scale by the root mean square only (Zhang & Sennrich, 2019), learned gain (1)."""

    def __init__(self, d_model: int):
        super().__init__(d_model, eps=EPS)

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        super().reset_parameters()


@NORM_TYPES.register("scalenorm")
class ScaleNorm(nn.Module, OwnsInit):
    """``g * x / ||x||`` (Nguyen & Salazar, 2019, eq. 5): each vector projected onto the
    sphere of radius g, one learned scalar g per norm ("All g's in SCALENORM are initialized
    to sqrt(d)", §3.2), so a unit-variance input keeps its length; the norm is clamped at
    eps, as the authors' implementation does."""

    def __init__(self, d_model: int):
        super().__init__()
        self.d_model = d_model
        self.g = nn.Parameter(torch.empty(()))  # a scalar
        self.reset_parameters()

    @torch.no_grad()
    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        self.g.fill_(math.sqrt(self.d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.g * x / x.norm(dim=-1, keepdim=True).clamp(min=EPS)
