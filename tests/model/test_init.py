"""Weight initialisation and the SwiGLU hidden width."""

import math

import pytest
import torch
from torch import nn

from transformer_lab.model import Seq2SeqTransformer
from transformer_lab.model.init import initialize
from transformer_lab.model.layers import FFNS, swiglu_hidden


def build(**overrides) -> Seq2SeqTransformer:
    kwargs = dict(
        src_vocab_size=20,
        tgt_vocab_size=20,
        d_model=16,
        num_heads=2,
        num_encoder_layers=2,
        num_decoder_layers=2,
        d_ff=32,
    )
    return Seq2SeqTransformer(**{**kwargs, **overrides})


def test_same_init_seed_gives_identical_weights_even_after_the_global_rng_is_disturbed():
    torch.manual_seed(0)
    first = build(init_seed=42, pos_encoding="learned")
    torch.manual_seed(1)
    torch.rand(1000)
    second = build(init_seed=42, pos_encoding="learned")
    a, b = first.state_dict(), second.state_dict()
    assert a.keys() == b.keys()
    for name in a:
        assert torch.equal(a[name], b[name]), name


def test_different_init_seeds_give_different_weight_matrices():
    a, b = build(init_seed=1).state_dict(), build(init_seed=2).state_dict()
    differing = [name for name in a if not torch.equal(a[name], b[name])]
    matrices = [name for name, value in a.items() if value.dim() == 2]
    assert matrices and set(matrices) <= set(differing)


def test_without_init_seed_the_global_rng_decides():
    torch.manual_seed(3)
    first = build().state_dict()
    torch.manual_seed(3)
    again = build().state_dict()
    other = build().state_dict()  # the global RNG has moved on
    assert all(torch.equal(first[name], again[name]) for name in first)
    assert not torch.equal(first["src_embed.weight"], other["src_embed.weight"])


def test_token_embeddings_have_std_d_model_to_the_minus_half():
    d_model = 64
    model = build(
        src_vocab_size=4000,
        tgt_vocab_size=4000,
        d_model=d_model,
        num_heads=4,
        num_encoder_layers=1,
        num_decoder_layers=1,
        pos_encoding="learned",
        max_len=4000,
        init_seed=0,
    )
    # 256,000 draws each: the standard error of the std is ~0.14%. The learned position
    # table has the sinusoid's scale instead (test_positional_scale.py).
    for table in (model.src_embed.weight, model.tgt_embed.weight):
        assert table.std().item() == pytest.approx(d_model**-0.5, rel=0.01)
        assert abs(table.mean().item()) < 0.01 * d_model**-0.5


def stacked_matrices(name: str, module: nn.Module, model: Seq2SeqTransformer) -> int:
    """How many matrices a projection fuses: Q/K/V, K/V, SwiGLU's W1/V; 1 if unfused."""
    leaf = name.rsplit(".", 1)[-1]
    gated = leaf == "w1" and module.out_features != model.encoder_layers[0].ffn.w2.in_features
    return {"in_proj": 3, "kv_proj": 2}.get(leaf, 2 if gated else 1)


def fused_blocks(model: Seq2SeqTransformer):
    """(name, block, bound) for every block of every fused projection."""
    d = model.d_model
    for name, module in model.named_modules():
        if isinstance(module, nn.Linear) and (n := stacked_matrices(name, module, model)) > 1:
            for i, block in enumerate(module.weight.chunk(n, dim=0)):
                fan_out, fan_in = block.shape
                assert fan_in == d or fan_out == d, name
                yield f"{name}[{i}]", block, math.sqrt(6 / (fan_in + fan_out))


@pytest.mark.parametrize("activation", ["relu", "swiglu"])
def test_each_block_of_a_fused_projection_has_its_own_xavier_bound(activation):
    model = build(d_model=64, num_heads=4, d_ff=128, activation=activation, init_seed=0)
    blocks = list(fused_blocks(model))
    # 2 self-attention in_proj x 3 blocks, 2 cross kv_proj x 2 (+ 4 SwiGLU w1 x 2)
    assert len(blocks) == 6 * 2 + 2 * 2 + (8 if activation == "swiglu" else 0)
    for name, block, bound in blocks:
        largest = block.abs().max().item()
        assert 0.9 * bound < largest <= bound, name
    in_proj = model.encoder_layers[0].self_attn.in_proj.weight
    assert math.sqrt(6 / (2 * 64)) == pytest.approx(blocks[0][2])
    assert in_proj.abs().max().item() > math.sqrt(6 / (64 + 3 * 64))  # not one [3D, D] matrix


def test_unfused_projections_are_xavier_uniform_with_their_own_fans():
    model = build(d_model=64, num_heads=4, d_ff=128, init_seed=0)
    checked = 0
    for name, module in model.named_modules():
        if isinstance(module, nn.Linear) and stacked_matrices(name, module, model) == 1:
            bound = math.sqrt(6 / (module.in_features + module.out_features))
            assert 0.9 * bound < module.weight.abs().max().item() <= bound, name
            checked += 1
    # encoder layer: out_proj, w1, w2; decoder layer: 2 out_proj, q_proj, w1, w2; the head
    assert checked == 2 * 3 + 2 * 5 + 1


def test_all_biases_start_at_zero_and_layernorms_at_identity():
    model = build(norm="pre", init_seed=0)
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    norms = [m for m in model.modules() if isinstance(m, nn.LayerNorm)]
    assert linears and len(norms) == 2 * 2 + 2 * 3 + 2
    for linear in linears:
        assert torch.equal(linear.bias, torch.zeros_like(linear.bias))
    for norm in norms:
        assert torch.equal(norm.weight, torch.ones_like(norm.weight))
        assert torch.equal(norm.bias, torch.zeros_like(norm.bias))


def test_tied_embeddings_share_storage_with_the_output_weight_and_keep_the_embedding_init():
    d_model = 64
    model = build(
        tgt_vocab_size=4000, d_model=d_model, num_heads=4, tie_embeddings=True, init_seed=0
    )
    assert model.output.weight is model.tgt_embed.weight
    assert model.output.weight.data_ptr() == model.tgt_embed.weight.data_ptr()
    assert model.tgt_embed.weight.std().item() == pytest.approx(d_model**-0.5, rel=0.01)
    with torch.no_grad():
        model.tgt_embed.weight[5, 0] = 123.0
    assert model.output.weight[5, 0].item() == 123.0
    untied = build(tgt_vocab_size=4000, d_model=d_model, num_heads=4, init_seed=0)
    assert untied.output.weight.data_ptr() != untied.tgt_embed.weight.data_ptr()


def test_swiglu_hidden_width_is_two_thirds_of_d_ff_rounded_up_to_a_multiple_of_8():
    assert swiglu_hidden(2048) == 1368
    assert swiglu_hidden(256) == 176
    assert swiglu_hidden(24) == 16  # already a multiple of 8
    assert swiglu_hidden(100) == 72  # 66 -> 72


def count(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def test_swiglu_ffn_has_within_one_percent_of_the_relu_ffn_parameters():
    relu = FFNS["relu"](512, 2048, 0.0)
    swiglu = FFNS["swiglu"](512, 2048, 0.0)
    assert count(relu) == 2 * 512 * 2048 + 2048 + 512
    assert count(swiglu) == 3 * 512 * 1368 + 2 * 1368 + 512
    assert abs(count(swiglu) - count(relu)) / count(relu) < 0.01


def test_swiglu_ffn_computes_w2_of_silu_gate_times_value():
    torch.manual_seed(0)
    ffn = FFNS["swiglu"](8, 24, 0.0).double()
    x = torch.randn(2, 3, 8, dtype=torch.float64)
    hidden = swiglu_hidden(24)
    gate_w, value_w = ffn.w1.weight[:hidden], ffn.w1.weight[hidden:]
    gate_b, value_b = ffn.w1.bias[:hidden], ffn.w1.bias[hidden:]
    manual = nn.functional.silu(x @ gate_w.T + gate_b) * (x @ value_w.T + value_b)
    torch.testing.assert_close(ffn(x), ffn.w2(manual), atol=1e-14, rtol=0)


def test_a_module_with_parameters_but_no_init_of_its_own_is_refused():
    """A plain nn.Embedding added to the model (a segment table, say) would otherwise take
    the token embeddings' init unseen; init.py refuses it instead."""
    model = build()
    model.segment_embed = nn.Embedding(2, 16)
    with pytest.raises(TypeError, match="Embedding holds parameters but no init"):
        initialize(model, seed=0)


def test_each_module_that_owns_its_init_draws_it():
    """Token tables N(0, d_model^-0.5), the learned position table N(0, 1/2): each from its
    own class, whatever the module is called."""
    model = build(d_model=64, num_heads=4, pos_encoding="learned", init_seed=0)
    assert model.src_embed.weight.std().item() == pytest.approx(64**-0.5, rel=0.05)
    assert model.src_pos.table.weight.std().item() == pytest.approx(0.5**0.5, rel=0.1)
