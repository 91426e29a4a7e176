"""Admin (Liu et al., 2020): post-norm whose residual streams are weighted by omegas that one
profiling pass sets, sublayer after sublayer, from the variance accumulated below."""

import itertools
import math

import pytest
import torch

from transformer_lab.model import Seq2SeqTransformer
from transformer_lab.model.admin import needs_profiling, profile_admin, residual_weights
from transformer_lab.model.residual import ResidualWeight


def _model(norm: str, dropout: float = 0.0, **stacks) -> Seq2SeqTransformer:
    return Seq2SeqTransformer(
        16, 16, d_model=32, num_heads=4, num_encoder_layers=3, num_decoder_layers=3,
        d_ff=64, dropout=dropout, norm=norm, init_seed=0, **stacks,
    )  # fmt: skip


def _batch():
    generator = torch.Generator().manual_seed(1)
    return torch.randint(3, 16, (8, 6), generator=generator), torch.randint(
        3, 16, (8, 7), generator=generator
    )


def test_before_profiling_admin_is_post_norm_weight_for_weight():
    src, tgt = _batch()
    admin, post = _model("admin"), _model("post")
    assert torch.equal(admin(src, tgt), post(src, tgt))
    assert needs_profiling(admin) and not needs_profiling(post)


def test_each_omega_is_the_scale_of_what_the_sublayers_below_it_accumulated():
    """In each stack the first omega is 1 and every next one is sqrt(Var[omega x] +
    Var[branch]) of the sublayer before it, in the order the sublayers run (the decoder's
    self-attention, cross-attention, FFN); the stacks keep separate ratios."""
    model = _model("admin")
    calls = []
    for weight in residual_weights(model):
        weight.register_forward_hook(
            lambda module, inputs, _: calls.append((module, *inputs, module.omega.clone()))
        )
    profile_admin(model, *_batch())
    encoder = set(residual_weights(model.encoder_layers))
    for stack in ([c for c in calls if c[0] in encoder], [c for c in calls if c[0] not in encoder]):
        assert len(stack) in (6, 9)
        assert torch.equal(stack[0][3], torch.ones(32))
        for (_, x, branch, omega), (_, _, _, after) in itertools.pairwise(stack):
            expected = math.sqrt((omega * x).var().item() + branch.var().item())
            assert torch.allclose(after, torch.full((32,), expected))
    omegas = [c[3][0].item() for c in calls]
    assert all(omega > 1.0 for omega in omegas[1:6]), "the encoder's omegas grow from 1"


def test_profiling_leaves_the_global_rng_as_it_was_and_the_model_in_its_mode():
    model = _model("admin", dropout=0.1).eval()
    before = torch.get_rng_state()
    profile_admin(model, *_batch())
    assert torch.equal(torch.get_rng_state(), before)
    assert not model.training


def test_a_profiled_model_saved_and_loaded_is_not_profiled_again():
    model = _model("admin")
    profile_admin(model, *_batch())
    loaded = _model("admin")
    loaded.load_state_dict(model.state_dict())
    assert not needs_profiling(loaded)
    for a, b in zip(residual_weights(model), residual_weights(loaded), strict=True):
        assert torch.equal(a.omega, b.omega)


def test_only_an_admin_stack_gets_omegas():
    hybrid = _model("post", encoder_norm="admin")
    assert len(residual_weights(hybrid.encoder_layers)) == 6
    assert residual_weights(hybrid.decoder_layers) == []
    profile_admin(hybrid, *_batch())
    assert not needs_profiling(hybrid)


@pytest.mark.parametrize("width", [16, 64])
def test_omegas_are_trainable_vectors_over_the_channels(width):
    weight = ResidualWeight(width)
    assert weight.omega.requires_grad and weight.omega.shape == (width,)
