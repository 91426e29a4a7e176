"""The sandwich and deepnorm placements, the rmsnorm norm type, and DeepNet's init."""

import math

import pytest
import torch
from torch import nn

from transformer_lab.job.build import build_data_and_model
from transformer_lab.model import Seq2SeqTransformer
from transformer_lab.model.norms import NORM_TYPES
from transformer_lab.model.residual import Residual, deepnorm_scales

F64 = torch.float64


def branch(x: torch.Tensor) -> torch.Tensor:
    """A fixed nonlinear stand-in for a sublayer."""
    return torch.tanh(3.0 * x) + 0.5


def residual_output(norm: str, x: torch.Tensor, **kwargs) -> torch.Tensor:
    residual = Residual(d_model=x.size(-1), dropout=0.0, norm=norm, **kwargs).to(F64).eval()
    return residual.outer(x, branch(residual.inner(x)))


@pytest.fixture
def x() -> torch.Tensor:
    return torch.randn(2, 3, 8, dtype=F64, generator=torch.Generator().manual_seed(0)) * 4


def layer_norm(x):
    return nn.functional.layer_norm(x, x.shape[-1:], eps=1e-5)


def test_sandwich_is_x_plus_norm_of_the_branch_of_the_normalised_input(x):
    expected = x + layer_norm(branch(layer_norm(x)))
    torch.testing.assert_close(residual_output("sandwich", x), expected, atol=1e-14, rtol=0)


def test_deepnorm_is_the_norm_of_alpha_x_plus_the_branch(x):
    expected = layer_norm(2.5 * x + branch(x))
    torch.testing.assert_close(
        residual_output("deepnorm", x, alpha=2.5), expected, atol=1e-14, rtol=0
    )


def test_rmsnorm_divides_by_the_root_mean_square_without_centring(x):
    out = residual_output("post", x, norm_type="rmsnorm")
    y = x + branch(x)
    expected = y / (y.pow(2).mean(-1, keepdim=True) + 1e-5).sqrt()
    torch.testing.assert_close(out, expected, atol=1e-14, rtol=0)
    assert out.mean(-1).abs().max() > 0.1  # not centred, unlike LayerNorm


def test_deepnorm_constants_for_6_plus_6_layers_are_those_of_the_deepnet_paper():
    (enc_alpha, enc_beta), (dec_alpha, dec_beta) = deepnorm_scales("deepnorm", 6, 6)
    assert enc_alpha == pytest.approx(0.81 * 6 ** (5 / 16))  # (N^4 M)^(1/16) with N = M = 6
    assert enc_beta == pytest.approx(0.87 * 6 ** (-5 / 16))
    assert dec_alpha == pytest.approx(18**0.25)
    assert dec_beta == pytest.approx(72**-0.25)
    assert deepnorm_scales("post", 6, 6) == ((1.0, 1.0), (1.0, 1.0))


def build(norm: str, **overrides) -> Seq2SeqTransformer:
    kwargs = dict(
        src_vocab_size=20,
        tgt_vocab_size=20,
        d_model=16,
        num_heads=2,
        num_encoder_layers=3,
        num_decoder_layers=2,
        d_ff=32,
        init_seed=0,
    )
    return Seq2SeqTransformer(norm=norm, **{**kwargs, **overrides})


def test_deepnorm_init_scales_value_output_and_ffn_weights_by_beta_and_keeps_q_and_k():
    post, deep = build("post").state_dict(), build("deepnorm").state_dict()
    (_, enc_beta), (_, dec_beta) = deepnorm_scales("deepnorm", 3, 2)
    d = 16
    for name, weight in post.items():
        beta = enc_beta if name.startswith("encoder_layers") else dec_beta
        scaled = deep[name]
        if name.endswith(("ffn.w1.weight", "ffn.w2.weight", "out_proj.weight")):
            torch.testing.assert_close(scaled, beta * weight, atol=0, rtol=1e-6)
        elif name.endswith("in_proj.weight"):  # [Q; K; V]
            assert torch.equal(scaled[: 2 * d], weight[: 2 * d])
            torch.testing.assert_close(scaled[2 * d :], beta * weight[2 * d :], atol=0, rtol=1e-6)
        elif name.endswith("kv_proj.weight"):  # [K; V]
            assert torch.equal(scaled[:d], weight[:d])
            torch.testing.assert_close(scaled[d:], beta * weight[d:], atol=0, rtol=1e-6)
        else:
            assert torch.equal(scaled, weight), name


@pytest.mark.parametrize(
    ("norm", "has_final_norm"),
    [("post", False), ("pre", True), ("sandwich", True), ("deepnorm", False)],
)
def test_only_placements_that_normalise_before_close_their_stacks_with_a_norm(norm, has_final_norm):
    model = build(norm)
    for stack_norm in (model.encoder_norm, model.decoder_norm):
        assert isinstance(stack_norm, nn.LayerNorm) == has_final_norm


def test_rmsnorm_model_has_only_rmsnorms_and_finite_gradients():
    model = build("sandwich", norm_type="rmsnorm")
    kinds = {type(m) for m in model.modules() if isinstance(m, nn.LayerNorm | nn.RMSNorm)}
    assert kinds == {NORM_TYPES["rmsnorm"]}  # the registered subclass of nn.RMSNorm
    # 3 encoder layers x 2 residuals + 2 decoder layers x 3, each with 2 norms, + 2 stack norms
    assert sum(isinstance(m, nn.RMSNorm) for m in model.modules()) == 2 * (3 * 2 + 2 * 3) + 2
    src = torch.tensor([[5, 6, 7, 2]])
    tgt_in = torch.tensor([[1, 7, 6, 5]])
    loss = model(src, tgt_in).logsumexp(-1).mean()
    loss.backward()
    assert all(
        math.isfinite(p.grad.norm().item()) for p in model.parameters() if p.grad is not None
    )


def test_norm_type_config_group_reaches_the_model(compose_train):
    cfg = compose_train(["model/norm=deepnorm", "model/norm_type=rmsnorm"])
    _, module = build_data_and_model(cfg)
    assert (module.model.config.norm, module.model.config.norm_type) == ("deepnorm", "rmsnorm")
    assert any(isinstance(m, nn.RMSNorm) for m in module.model.modules())
