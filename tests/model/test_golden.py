"""Golden numbers from the tutorials the project grew from (see shared/seeds/README.md).

Seed 000 hand-sets a d_model=4, 2-head causal self-attention in float64 and prints its
results; our modules loaded with the same weights must reproduce them. Seed 004 gives the
parameter count of the base configuration.
"""

import math

import pytest
import torch
from torch import nn

from transformer_lab.model import Seq2SeqTransformer, masks
from transformer_lab.model.attention import MultiHeadAttention
from transformer_lab.model.positional import sinusoid_table
from transformer_lab.model.residual import Residual

F64 = torch.float64

# --- seed 000: the hand-set example --------------------------------------------------------

EMBEDDINGS = torch.tensor(
    [
        [0.20, -0.10, 0.30, 0.40],
        [-0.30, 0.50, 0.10, -0.20],
        [0.40, 0.20, -0.50, 0.10],
        [-0.10, -0.40, 0.20, 0.30],
    ],
    dtype=F64,
)
W_Q = torch.tensor(
    [
        [0.40, -0.10, 0.20, 0.30],
        [0.10, 0.50, -0.20, 0.10],
        [-0.30, 0.20, 0.40, 0.10],
        [0.20, -0.40, 0.10, 0.50],
    ],
    dtype=F64,
)
W_K = torch.tensor(
    [
        [0.30, 0.20, -0.10, 0.40],
        [-0.20, 0.40, 0.30, 0.10],
        [0.10, -0.30, 0.50, 0.20],
        [0.40, 0.10, 0.20, -0.20],
    ],
    dtype=F64,
)
W_V = torch.tensor(
    [
        [0.50, 0.10, -0.20, 0.30],
        [0.20, -0.40, 0.30, 0.10],
        [-0.10, 0.30, 0.40, 0.20],
        [0.30, 0.20, 0.10, -0.50],
    ],
    dtype=F64,
)
B_Q = torch.tensor([0.05, -0.02, 0.03, 0.01], dtype=F64)
B_K = torch.tensor([-0.03, 0.04, 0.02, -0.01], dtype=F64)
B_V = torch.tensor([0.01, 0.02, -0.04, 0.03], dtype=F64)
W_O = torch.tensor(
    [
        [0.60, -0.20, 0.10, 0.30],
        [-0.10, 0.50, 0.20, -0.30],
        [0.20, 0.10, 0.70, -0.20],
        [0.30, -0.40, 0.10, 0.50],
    ],
    dtype=F64,
)
B_O = torch.tensor([0.02, -0.01, 0.03, -0.04], dtype=F64)
GAMMA = torch.tensor([1.10, 0.90, 1.20, 0.80], dtype=F64)
BETA = torch.tensor([0.10, -0.20, 0.05, 0.30], dtype=F64)

QUERY_2_WEIGHTS = torch.tensor(
    [
        [0.3857284667, 0.3199199864, 0.2943515469, 0.0],
        [0.2415567838, 0.3848376998, 0.3736055164, 0.0],
    ],
    dtype=F64,
)
PRE_VS_POST_MAX_DIFF = 1.6793967211269867


def seed_positioned() -> torch.Tensor:
    """The seed's input ``[1, 4, 4]``: embeddings * sqrt(4) + a float64 sinusoid table.

    Computed exactly as the seed does (float64 throughout): the model's own table is a
    float32 buffer (portable to devices without float64), whose rounding (~6e-8) would
    move the golden attention weights by ~3e-9, beyond their 1e-9 tolerance.
    """
    positions = torch.arange(4, dtype=F64)[:, None]
    denominators = 10000.0 ** (torch.arange(0, 4, 2, dtype=F64) / 4)
    pe = torch.empty(4, 4, dtype=F64)
    pe[:, 0::2] = torch.sin(positions / denominators)
    pe[:, 1::2] = torch.cos(positions / denominators)
    return (EMBEDDINGS * math.sqrt(4) + pe)[None]


def seed_attention() -> MultiHeadAttention:
    attn = MultiHeadAttention(d_model=4, num_heads=2, dropout=0.0).to(F64).eval()
    with torch.no_grad():
        attn.in_proj.weight.copy_(torch.cat([W_Q, W_K, W_V]))
        attn.in_proj.bias.copy_(torch.cat([B_Q, B_K, B_V]))
        attn.out_proj.weight.copy_(W_O)
        attn.out_proj.bias.copy_(B_O)
    return attn


def causal_mask(length: int) -> torch.Tensor:
    positions = torch.arange(length)
    return masks.causal(positions, positions)


def test_sinusoid_table_for_d_model_4_matches_tutorial_table():
    expected = torch.tensor(
        [
            [0.0, 1.0, 0.0, 1.0],
            [0.8415, 0.5403, 0.0100, 0.99995],
            [0.9093, -0.4161, 0.0200, 0.9998],
            [0.1411, -0.9900, 0.0300, 0.9996],
        ]
    )
    table = sinusoid_table(4, 4)
    assert table.shape == (4, 4)
    torch.testing.assert_close(table, expected, atol=5e-5, rtol=0)


def test_sinusoid_table_agrees_with_float64_formula_to_float32_precision():
    torch.testing.assert_close(
        sinusoid_table(4, 4).to(F64), seed_positioned()[0] - 2 * EMBEDDINGS, atol=1e-7, rtol=0
    )


def test_embedding_example_is_token_times_sqrt_d_model_plus_position_0():
    model = (
        Seq2SeqTransformer(
            5, 5, d_model=4, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=8
        )
        .to(F64)
        .eval()
    )
    with torch.no_grad():
        model.src_embed.weight[3] = EMBEDDINGS[0]
    x = model._embed(model.src_embed, model.src_pos, torch.tensor([[3]]), torch.arange(1))
    torch.testing.assert_close(
        x, torch.tensor([[[0.40, 0.80, 0.60, 1.80]]], dtype=F64), atol=1e-15, rtol=0
    )


def test_model_embedding_path_gives_the_seed_positioned_embeddings():
    model = (
        Seq2SeqTransformer(
            7, 7, d_model=4, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=8
        )
        .to(F64)
        .eval()
    )
    with torch.no_grad():
        model.tgt_embed.weight[3:7] = EMBEDDINGS
    x = model._embed(model.tgt_embed, model.tgt_pos, torch.tensor([[3, 4, 5, 6]]), torch.arange(4))
    # within the float32 rounding of the model's sinusoid buffer
    torch.testing.assert_close(x, seed_positioned(), atol=1e-7, rtol=0)


def test_width_2_layernorm_example_maps_1_3_plus_half_minus_half_to_minus_1_1():
    residual = Residual(d_model=2, dropout=0.0, norm="post").to(F64).eval()
    out = residual.outer(
        torch.tensor([[1.0, 3.0]], dtype=F64), torch.tensor([[0.5, -0.5]], dtype=F64)
    )
    # (1.5, 2.5): mean 2, biased variance 0.25 -> (-0.5, 0.5) / sqrt(0.25 + eps)
    exact = 0.5 / math.sqrt(0.25 + residual.norm.eps)
    torch.testing.assert_close(out, torch.tensor([[-exact, exact]], dtype=F64), atol=1e-15, rtol=0)
    torch.testing.assert_close(out, torch.tensor([[-1.0, 1.0]], dtype=F64), atol=2e-5, rtol=0)


def test_seed_attention_per_head_weights_of_query_2_match_golden_values():
    _, weights = seed_attention()(seed_positioned(), causal_mask(4), need_weights=True)
    assert weights.shape == (1, 2, 4, 4)
    torch.testing.assert_close(weights[0, :, 2], QUERY_2_WEIGHTS, atol=1e-9, rtol=0)
    assert torch.equal(weights[0, :, 2, 3], torch.zeros(2, dtype=F64))


def test_seed_attention_equals_torch_multihead_attention_with_the_same_weights():
    """Our fused in_proj rows are [W_q; W_k; W_v], exactly as in nn.MultiheadAttention,
    and masks.to_blocked converts our mask to its True = blocked convention."""
    reference = nn.MultiheadAttention(4, 2, batch_first=True, dtype=F64).eval()
    with torch.no_grad():
        reference.in_proj_weight.copy_(torch.cat([W_Q, W_K, W_V]))
        reference.in_proj_bias.copy_(torch.cat([B_Q, B_K, B_V]))
        reference.out_proj.weight.copy_(W_O)
        reference.out_proj.bias.copy_(B_O)
    x, mask = seed_positioned(), causal_mask(4)
    expected, expected_weights = reference(
        x, x, x, attn_mask=masks.to_blocked(mask), average_attn_weights=False
    )
    out, weights = seed_attention()(x, mask, need_weights=True)
    torch.testing.assert_close(out, expected, atol=1e-14, rtol=0)
    torch.testing.assert_close(weights, expected_weights, atol=1e-14, rtol=0)


def test_seed_pre_norm_and_post_norm_differ_by_the_golden_max_abs_difference():
    attn, x, mask = seed_attention(), seed_positioned(), causal_mask(4)
    outputs = {}
    for norm in ("post", "pre"):
        residual = Residual(d_model=4, dropout=0.0, norm=norm).to(F64).eval()
        with torch.no_grad():
            residual.norm.weight.copy_(GAMMA)
            residual.norm.bias.copy_(BETA)
        outputs[norm] = residual.outer(x, attn(residual.inner(x), mask)[0])
    layer_norm = nn.functional.layer_norm
    post_manual = layer_norm(x + attn(x, mask)[0], (4,), GAMMA, BETA, eps=1e-5)
    pre_manual = x + attn(layer_norm(x, (4,), GAMMA, BETA, eps=1e-5), mask)[0]
    torch.testing.assert_close(outputs["post"], post_manual, atol=1e-15, rtol=0)
    torch.testing.assert_close(outputs["pre"], pre_manual, atol=1e-15, rtol=0)
    max_diff = (outputs["pre"] - outputs["post"]).abs().max().item()
    assert max_diff == pytest.approx(PRE_VS_POST_MAX_DIFF, abs=1e-12)


def test_seed_full_causal_pass_equals_recomputing_each_prefix():
    attn, x = seed_attention(), seed_positioned()
    full, _ = attn(x, causal_mask(4), need_weights=True)
    last_of_each_prefix = torch.stack(
        [attn(x[:, :end], causal_mask(end), need_weights=True)[0][0, -1] for end in range(1, 5)]
    )
    assert (full[0] - last_of_each_prefix).abs().max().item() < 1e-12


def test_seed_sdpa_fast_path_equals_explicit_path():
    attn, x, mask = seed_attention(), seed_positioned(), causal_mask(4)
    explicit, weights = attn(x, mask, need_weights=True)
    fast, no_weights = attn(x, mask, need_weights=False)
    assert weights is not None and no_weights is None
    torch.testing.assert_close(fast, explicit, atol=1e-14, rtol=0)


# --- seed 004: the base configuration --------------------------------------------------------

BASE_ARGS = (10000, 8000, 512, 8, 6, 6, 2048, 0.1)
BASE_PARAMETERS = 57_458_496


def trainable_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def test_base_config_has_57458496_parameters_and_maps_src_and_tgt_to_logits():
    torch.manual_seed(0)
    model = Seq2SeqTransformer(*BASE_ARGS, "post", "sinusoidal", "relu").eval()
    assert trainable_parameters(model) == BASE_PARAMETERS
    src = torch.randint(3, 10000, (2, 10))
    tgt_in = torch.randint(3, 8000, (2, 8))
    with torch.no_grad():
        logits = model(src, tgt_in)
    assert logits.shape == (2, 8, 8000)
    assert torch.isfinite(logits).all()


def test_pre_norm_base_config_has_exactly_two_final_layernorms_more():
    # Parameter counts only: build on the meta device (no memory, no init cost).
    with torch.device("meta"):
        model = Seq2SeqTransformer(*BASE_ARGS, "pre", "sinusoidal", "relu")
    assert trainable_parameters(model) == BASE_PARAMETERS + 2 * 512 * 2


def test_tied_embeddings_remove_exactly_one_output_matrix():
    with torch.device("meta"):
        model = Seq2SeqTransformer(*BASE_ARGS, "post", "sinusoidal", "relu", tie_embeddings=True)
    assert trainable_parameters(model) == BASE_PARAMETERS - 8000 * 512
