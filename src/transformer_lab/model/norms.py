"""The norm types, by name (``model.norm_type``): what a norm placement puts in its place.

Each is a module over the last dimension built from ``d_model`` (and, as every option, the
``stack`` it sits in and its own ``settings``: :class:`~.options.Option`) that owns its
initialisation (:class:`~transformer_lab.model.init.OwnsInit`); eps 1e-5 for each.
"""

import torch
from torch import nn

from transformer_lab.config.registry import Registry
from transformer_lab.model.init import OwnsInit
from transformer_lab.model.options import ENCODER, Option, Stack

NORM_TYPES = Registry("norm_type")
EPS = 1e-5


@NORM_TYPES.register("layernorm")
class LayerNorm(nn.LayerNorm, OwnsInit, Option):
    """Centre, scale by the standard deviation, learned gain (1) and bias (0)."""

    def __init__(self, d_model: int, *, stack: Stack = ENCODER, settings=None):
        super().__init__(d_model, eps=EPS)
        self.place(stack, settings)

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        super().reset_parameters()


@NORM_TYPES.register("rmsnorm")
class RMSNorm(nn.RMSNorm, OwnsInit, Option):
    """Scale by the root mean square only (Zhang & Sennrich, 2019), learned gain (1)."""

    def __init__(self, d_model: int, *, stack: Stack = ENCODER, settings=None):
        super().__init__(d_model, eps=EPS)
        self.place(stack, settings)

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        super().reset_parameters()
