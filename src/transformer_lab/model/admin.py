"""Admin, adaptive model initialisation (Liu et al., 2020, *Understanding the Difficulty of
Training Transformers*): post-norm with each residual stream weighted by a learned
per-channel ``omega``, set by a profiling pass so that no layer starts out depending
heavily on its residual branch.

Liu et al.'s abstract: "heavy dependency on its residual branch makes training unstable,
since it amplifies small parameter perturbations ... Yet we observe that a light dependency
limits the model potential"; Admin "stabilize[s] the early stage's training and unleash[es]
its full potential in the late stage". Their sections after §1 could not be read here
(docs/papers.md), so the method follows the authors' own implementation (github.com/
LiyuanLucasLiu/Transforemr-Clinic, ``fairseq/modules/transformer_layer.py``,
``--init-type adaptive-profiling`` then ``adaptive``):

- each sublayer i computes ``Norm(omega_i * x + Dropout(F_i(x)))``, omega_i a trainable
  vector over the channels, one per sublayer (self-attention, cross-attention, FFN);
- profiling runs one forward pass on a training batch (in training mode, as theirs does)
  with a running ratio per stack that starts at 1: sublayer i takes ``omega_i = ratio``,
  then ``ratio = sqrt(Var[omega_i x] + Var[Dropout(F_i(x))])``, the scale of what the
  residual stream has accumulated so far; the encoder and the decoder each keep their
  own ratio, in the order their sublayers run;
- training then starts from those omegas (theirs is a second run that reads them from a
  file; here the first training step's batch is profiled just before it is taken).

It is registered as the norm placement ``admin`` (``model/norm=admin``, or per stack as
``model.encoder.norm=admin``); the profiling runs once per model: a resumed run's
``ResidualWeight.profiled`` is saved with its weights.
"""

import math

import torch
from torch import nn

from transformer_lab.model.residual import NORM_PLACEMENTS, Placement, ResidualWeight


@NORM_PLACEMENTS.register("admin")
class Admin(Placement):
    """``Norm(omega * x + Dropout(F(x)))`` with ``omega`` from a profiling pass."""

    residual_weight = True


class _Ratio:
    """One stack's running ratio while profiling: what each next omega is set to."""

    def __init__(self):
        self.value = 1.0

    def place(self, omega: nn.Parameter, x: torch.Tensor, branch: torch.Tensor) -> None:
        omega.fill_(self.value)
        self.value = math.sqrt((omega * x).var().item() + branch.var().item())


def residual_weights(stack: nn.Module) -> list[ResidualWeight]:
    return [m for m in stack.modules() if isinstance(m, ResidualWeight)]


def needs_profiling(model: nn.Module) -> bool:
    """Whether ``model`` has Admin's omegas that no profiling pass has set yet."""
    return any(not w.profiled for w in residual_weights(model))


@torch.no_grad()
def profile_admin(model: nn.Module, src: torch.Tensor, tgt_in: torch.Tensor) -> None:
    """Set every omega of ``model`` from one forward pass on ``src``/``tgt_in`` (a
    training batch), in training mode; the global RNG is left as it was, so a profiled
    run trains on the same dropout draws as it would have."""
    stacks = [residual_weights(model.encoder_layers), residual_weights(model.decoder_layers)]
    for weights in stacks:
        ratio = _Ratio()
        for weight in weights:
            weight.chain = ratio
    was_training = model.training
    try:
        with torch.random.fork_rng(devices=[src.device] if src.is_cuda else []):
            model.train()
            model(src, tgt_in)
    finally:
        model.train(was_training)
        for weights in stacks:
            for weight in weights:
                weight.chain = None
                weight.profiled.fill_(True)
