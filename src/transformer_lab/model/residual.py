"""Where the norm sits around a residual sublayer: the norm-placement switch.

- ``post`` (Vaswani et al., 2017): ``Norm(x + Dropout(F(x)))``.
- ``pre`` (Xiong et al., 2020; fairseq ``normalize_before``): ``x + Dropout(F(Norm(x)))``;
  the stack then ends with one final norm (see :func:`final_norm`), since its residual
  stream is never normalised otherwise. Post-norm stacks get none, unlike
  ``torch.nn.Transformer``, which always appends one.
- ``sandwich`` (Ding et al., 2021, CogView): ``x + Dropout(Norm(F(Norm(x))))``: pre-norm
  whose branch output is normalised too, so no branch can blow up the residual stream.
  It keeps pre-norm's final stack norm.
- ``deepnorm`` (Wang et al., 2022, DeepNet): ``Norm(alpha * x + Dropout(F(x)))``: post-norm
  with the residual up-weighted by ``alpha`` and the branches' value/output/FFN weights
  initialised smaller by ``beta`` (:func:`deepnorm_scales`, applied by
  :func:`~transformer_lab.model.init.scale_residual_branches`). No final stack norm.

Each placement is a class in the registry :data:`NORM_PLACEMENTS` (``model.norm``);
``norm_type`` picks the norm itself from :data:`~transformer_lab.model.norms.NORM_TYPES`.

A layer calls :meth:`Residual.inner` on the sublayer's input and :meth:`Residual.outer`
to merge the sublayer's output back, so one class owns the whole placement.
"""

import torch
from torch import nn

from transformer_lab.config.registry import Registry
from transformer_lab.model.init import OwnsInit
from transformer_lab.model.norms import NORM_TYPES
from transformer_lab.model.options import ENCODER, Stack, built

NORM_PLACEMENTS = Registry("norm")


@NORM_PLACEMENTS.register("post")
class Placement:
    """``post``: ``Norm(x + Dropout(F(x)))``; the base every placement overrides."""

    before = False  # the sublayer reads a normalised input, and the stack ends with a norm
    branch_norm = False  # the sublayer's output is normalised too
    residual_weight = False  # a learned per-channel weight on the residual stream (admin)

    @staticmethod
    def scales(
        num_encoder_layers: int, num_decoder_layers: int
    ) -> tuple[tuple[float, float], tuple[float, float]]:
        """``((alpha, beta) of the encoder, (alpha, beta) of the decoder)``: the residual's
        weight and the branches' init gain; 1s but for deepnorm."""
        return (1.0, 1.0), (1.0, 1.0)


@NORM_PLACEMENTS.register("pre")
class PreNorm(Placement):
    """``x + Dropout(F(Norm(x)))`` with one final norm per stack."""

    before = True


@NORM_PLACEMENTS.register("sandwich")
class Sandwich(PreNorm):
    """``x + Dropout(Norm(F(Norm(x))))``: pre-norm with the branch output normalised."""

    branch_norm = True


@NORM_PLACEMENTS.register("deepnorm")
class DeepNorm(Placement):
    """``Norm(alpha * x + Dropout(F(x)))`` with branches initialised smaller by ``beta``."""

    @staticmethod
    def scales(num_encoder_layers: int, num_decoder_layers: int):
        """DeepNet's encoder-decoder constants for N encoder and M decoder layers (Wang et
        al., 2022, Figure 2(b); derived from the update bound of §4.2-4.3): encoder
        ``alpha = 0.81 (N^4 M)^(1/16)``, ``beta = 0.87 (N^4 M)^(-1/16)``;
        decoder ``alpha = (3M)^(1/4)``, ``beta = (12M)^(-1/4)``."""
        n, m = num_encoder_layers, num_decoder_layers
        encoder = (0.81 * (n**4 * m) ** (1 / 16), 0.87 * (n**4 * m) ** (-1 / 16))
        decoder = ((3 * m) ** (1 / 4), (12 * m) ** (-1 / 4))
        return encoder, decoder


class ResidualWeight(OwnsInit, nn.Module):
    """Admin's ``omega`` (Liu et al., 2020): a learned per-channel weight on the residual
    stream, ``Norm(omega * x + Dropout(F(x)))``. It starts at 1; a profiling forward pass on
    one batch (:func:`~transformer_lab.model.admin.profile_admin`) then sets each sublayer's
    omega from the variance that the sublayers below it add, in order, and ``profiled``
    (saved with the weights) says it was done, so a resumed run is not profiled again."""

    def __init__(self, d_model: int):
        super().__init__()
        self.omega = nn.Parameter(torch.ones(d_model))
        self.register_buffer("profiled", torch.tensor(False))
        self.chain = None  # set only while profiling: the stack's running ratio

    @torch.no_grad()
    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        self.omega.fill_(1.0)
        self.profiled.fill_(False)

    def forward(self, x: torch.Tensor, branch: torch.Tensor) -> torch.Tensor:
        """``omega * x``; while profiling, omega first takes its stack's running ratio."""
        if self.chain is not None:
            self.chain.place(self.omega, x, branch)
        return self.omega * x


def deepnorm_scales(
    norm: str, num_encoder_layers: int, num_decoder_layers: int
) -> tuple[tuple[float, float], tuple[float, float]]:
    """The placement ``norm``'s :meth:`Placement.scales`."""
    return NORM_PLACEMENTS.lookup(norm).scales(num_encoder_layers, num_decoder_layers)


class Residual(nn.Module):
    """One sublayer's residual connection, its dropout and its norm placement.

    ``alpha`` scales the residual stream before the branch is added (deepnorm's constant;
    1 for the other placements). A norm type that is an option is told the ``stack`` and
    given its own ``settings`` (:func:`~.options.built`).
    """

    def __init__(
        self,
        d_model: int,
        dropout: float,
        norm: str,
        norm_type: str = "layernorm",
        alpha: float = 1.0,
        *,
        stack: Stack = ENCODER,
        settings=None,
    ):
        super().__init__()
        placement = NORM_PLACEMENTS.lookup(norm)
        make_norm = NORM_TYPES.lookup(norm_type)
        self.before = placement.before
        self.alpha = alpha
        self.norm = built(make_norm, d_model, stack=stack, settings=settings)
        self.branch_norm = (
            built(make_norm, d_model, stack=stack, settings=settings)
            if placement.branch_norm
            else None
        )
        self.dropout = nn.Dropout(dropout)
        self.weight = ResidualWeight(d_model) if placement.residual_weight else None

    def inner(self, x: torch.Tensor) -> torch.Tensor:
        """The sublayer's input."""
        return self.norm(x) if self.before else x

    def outer(self, x: torch.Tensor, sublayer_out: torch.Tensor) -> torch.Tensor:
        """The residual stream after the sublayer."""
        if self.branch_norm is not None:
            sublayer_out = self.branch_norm(sublayer_out)
        if self.alpha != 1.0:
            x = self.alpha * x
        branch = self.dropout(sublayer_out)
        if self.weight is not None:
            x = self.weight(x, branch)
        y = x + branch
        return y if self.before else self.norm(y)


def final_norm(
    d_model: int,
    norm: str,
    norm_type: str = "layernorm",
    *,
    stack: Stack = ENCODER,
    settings=None,
) -> nn.Module:
    """The norm that closes ``stack``: only the placements that normalise before need one."""
    if not NORM_PLACEMENTS.lookup(norm).before:
        return nn.Identity()
    return built(NORM_TYPES.lookup(norm_type), d_model, stack=stack, settings=settings)
