"""Masks, and the invariances they must guarantee, for every norm x positional encoding.

Models are tiny, float64 and in eval mode, so "unchanged" can be checked to ~1e-12.
"""

import pytest
import torch
import torch.nn.functional as F

from transformer_lab.model import masks
from transformer_lab.model.residual import Residual
from transformer_lab.tokens import PAD

EXACT = dict(atol=1e-12, rtol=0)


# --- the mask builders ---------------------------------------------------------------------


def test_causal_mask_lets_query_i_attend_keys_up_to_i_and_blocks_the_future():
    positions = torch.arange(4)
    expected = torch.tensor(
        [
            [True, False, False, False],
            [True, True, False, False],
            [True, True, True, False],
            [True, True, True, True],
        ]
    )
    assert torch.equal(masks.causal(positions, positions), expected)


def test_causal_mask_of_a_cached_step_uses_absolute_positions():
    # query at position 2 over keys 0..2: sees all of them (not just key 0)
    assert torch.equal(
        masks.causal(torch.tensor([2]), torch.arange(3)), torch.tensor([[True, True, True]])
    )
    # queries 2, 3 over keys 0..3 are the last two rows of the full mask
    full = masks.causal(torch.arange(4), torch.arange(4))
    assert torch.equal(masks.causal(torch.tensor([2, 3]), torch.arange(4)), full[2:])


def test_key_padding_is_true_for_real_tokens_and_shaped_to_broadcast_over_heads_and_queries():
    tokens = torch.tensor([[5, 6, PAD], [7, PAD, PAD]])
    mask = masks.key_padding(tokens)
    assert mask.shape == (2, 1, 1, 3)
    assert mask[:, 0, 0].tolist() == [[True, True, False], [True, False, False]]


def test_combine_intersects_padding_and_causal_masks():
    padding = masks.key_padding(torch.tensor([[5, 6, PAD]]))
    combined = masks.combine(padding, masks.causal(torch.arange(3), torch.arange(3)))
    assert combined.shape == (1, 1, 3, 3)
    assert combined[0, 0].tolist() == [
        [True, False, False],
        [True, True, False],
        [True, True, False],
    ]
    assert masks.combine(padding) is padding


def test_with_bias_puts_minus_infinity_where_blocked_and_the_bias_elsewhere():
    mask = masks.combine(
        masks.key_padding(torch.tensor([[5, 6, PAD]])),
        masks.causal(torch.arange(3), torch.arange(3)),
    )
    bias = -torch.arange(18, dtype=torch.float64).view(2, 3, 3)  # [H, L_q, L_k]
    folded = masks.with_bias(mask, bias)
    assert folded.shape == (1, 2, 3, 3)
    allowed = mask.expand(1, 2, 3, 3)
    assert torch.isneginf(folded[~allowed]).all()
    assert torch.equal(folded[allowed], bias[None].expand(1, 2, 3, 3)[allowed])
    assert masks.with_bias(mask, None) is mask


def test_to_blocked_inverts_the_convention_for_nn_multihead_attention():
    mask = torch.tensor([[True, False], [True, True]])
    assert masks.to_blocked(mask).tolist() == [[False, True], [False, False]]


# --- invariances of the whole model --------------------------------------------------------


def test_changing_future_target_tokens_leaves_earlier_logits_unchanged(
    make_model, norm, pos_encoding, batch
):
    model = make_model(norm, pos_encoding)
    src, tgt_in = batch
    changed = tgt_in.clone()
    changed[:, 3:] = torch.tensor([4, 9, 10])  # positions 3..5, some of them PAD before
    with torch.no_grad():
        logits, changed_logits = model(src, tgt_in), model(src, changed)
    torch.testing.assert_close(changed_logits[:, :3], logits[:, :3], **EXACT)
    # the change does reach the positions it is allowed to reach
    assert (changed_logits[:, 3:] - logits[:, 3:]).abs().max() > 1e-3


def test_appending_pad_columns_to_the_source_leaves_logits_unchanged(
    make_model, norm, pos_encoding, batch
):
    model = make_model(norm, pos_encoding)
    src, tgt_in = batch
    padded_src = F.pad(src, (0, 5), value=PAD)
    with torch.no_grad():
        logits, padded_logits = model(src, tgt_in), model(padded_src, tgt_in)
    torch.testing.assert_close(padded_logits, logits, **EXACT)
    # a real token in place of the first appended PAD does change the output
    extra_src = padded_src.clone()
    extra_src[:, src.size(1)] = 5
    with torch.no_grad():
        assert (model(extra_src, tgt_in) - logits).abs().max() > 1e-3


def test_full_masked_pass_equals_recomputing_each_prefix(make_model, norm, pos_encoding, batch):
    model = make_model(norm, pos_encoding)
    src, tgt_in = batch
    with torch.no_grad():
        logits = model(src, tgt_in)
        prefix_logits = torch.stack(
            [model(src, tgt_in[:, : t + 1])[:, t] for t in range(tgt_in.size(1))], dim=1
        )
    torch.testing.assert_close(prefix_logits, logits, **EXACT)


def test_attention_rows_sum_to_one_with_exact_zeros_on_future_and_pad_keys(
    make_model, norm, pos_encoding, batch
):
    model = make_model(norm, pos_encoding)
    src, tgt_in = batch
    with torch.no_grad():
        _, attention = model(src, tgt_in, return_attention=True)
    src_real, tgt_real = src != PAD, tgt_in != PAD
    s, t = src.size(1), tgt_in.size(1)
    causal = torch.ones(t, t).tril().bool()
    allowed = {  # [B, L_q, L_k]: which keys each query may see
        "encoder": src_real[:, None, :].expand(-1, s, -1),
        "decoder_self": tgt_real[:, None, :] & causal,
        "cross": src_real[:, None, :].expand(-1, t, -1),
    }
    real_queries = {"encoder": src_real, "decoder_self": tgt_real, "cross": tgt_real}
    for kind in ("encoder", "decoder_self", "cross"):
        assert len(attention[kind]) == 2  # one per layer
        for weights in attention[kind]:
            assert weights.shape == (3, 2, *allowed[kind].shape[1:])
            blocked = ~allowed[kind][:, None].expand_as(weights)
            assert torch.equal(weights[blocked], torch.zeros_like(weights[blocked])), kind
            row_sums = weights.sum(-1).transpose(1, 2)[real_queries[kind]]  # [N, H]
            torch.testing.assert_close(row_sums, torch.ones_like(row_sums), **EXACT)
            assert (weights[~blocked] > 0).all(), kind


def test_post_norm_and_pre_norm_give_different_outputs_from_the_same_weights(
    make_model, pos_encoding, batch
):
    post = make_model("post", pos_encoding)
    pre = make_model("pre", pos_encoding, init_seed=1)  # different weights until loaded
    result = pre.load_state_dict(post.state_dict(), strict=False)
    assert sorted(result.missing_keys) == [
        "decoder_norm.bias",
        "decoder_norm.weight",
        "encoder_norm.bias",
        "encoder_norm.weight",
    ]
    assert result.unexpected_keys == []
    src, tgt_in = batch
    with torch.no_grad():
        difference = (pre(src, tgt_in) - post(src, tgt_in)).abs().max()
    assert difference > 1e-2


def test_pre_norm_stacks_end_with_a_layernorm_and_post_norm_stacks_do_not(make_model):
    post, pre = make_model("post"), make_model("pre")
    assert isinstance(pre.encoder_norm, torch.nn.LayerNorm)
    assert isinstance(pre.decoder_norm, torch.nn.LayerNorm)
    assert isinstance(post.encoder_norm, torch.nn.Identity)
    assert isinstance(post.decoder_norm, torch.nn.Identity)


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_residual_layernorm_equals_manual_biased_variance_formula(norm):
    gen = torch.Generator().manual_seed(0)
    residual = Residual(d_model=8, dropout=0.0, norm=norm).double().eval()
    with torch.no_grad():
        residual.norm.weight.copy_(torch.rand(8, generator=gen, dtype=torch.float64) + 0.5)
        residual.norm.bias.copy_(torch.randn(8, generator=gen, dtype=torch.float64))
    x = 3.0 * torch.randn(2, 5, 8, generator=gen, dtype=torch.float64) + 1.0
    h = torch.randn(2, 5, 8, generator=gen, dtype=torch.float64)

    def manual(z):
        mean = z.mean(-1, keepdim=True)
        variance = ((z - mean) ** 2).mean(-1, keepdim=True)  # biased: divide by d_model
        normed = (z - mean) / torch.sqrt(variance + 1e-5)
        return normed * residual.norm.weight + residual.norm.bias

    if norm == "post":  # LayerNorm(x + F(x)); the sublayer sees x itself
        torch.testing.assert_close(residual.inner(x), x, atol=0, rtol=0)
        torch.testing.assert_close(residual.outer(x, h), manual(x + h), **EXACT)
    else:  # x + F(LayerNorm(x))
        torch.testing.assert_close(residual.inner(x), manual(x), **EXACT)
        torch.testing.assert_close(residual.outer(x, h), x + h, atol=0, rtol=0)
    # the unbiased variance would give a measurably different answer
    unbiased = (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True) + 1e-5)
    assert (manual(x) - (unbiased * residual.norm.weight + residual.norm.bias)).abs().max() > 1e-2
