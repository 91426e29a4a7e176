"""The two attention paths (SDPA fast path, explicit path with weights) and the KV cache."""

import torch

from transformer_lab.model import masks
from transformer_lab.model.attention import KVCache, MultiHeadAttention
from transformer_lab.model.positional import ALiBi
from transformer_lab.tokens import PAD

F64 = torch.float64
EXACT = dict(atol=1e-12, rtol=0)


def test_sdpa_fast_path_equals_explicit_path_for_the_whole_model(
    make_model, norm, pos_encoding, batch
):
    model = make_model(norm, pos_encoding)
    src, tgt_in = batch  # both padded
    with torch.no_grad():
        fast = model(src, tgt_in)
        explicit, _ = model(src, tgt_in, return_attention=True)
        fast_memory = model.encode(src)
        explicit_memory, _ = model.encode(src, return_attention=True)
    torch.testing.assert_close(fast_memory, explicit_memory, **EXACT)
    torch.testing.assert_close(fast, explicit, **EXACT)


def seeded_attention(cross: bool = False) -> MultiHeadAttention:
    torch.manual_seed(0)
    return MultiHeadAttention(d_model=8, num_heads=2, dropout=0.0, cross=cross).to(F64).eval()


def test_cross_attention_paths_agree_and_ignore_padded_memory():
    attn = seeded_attention(cross=True)
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(2, 3, 8, generator=gen, dtype=F64)
    memory = torch.randn(2, 5, 8, generator=gen, dtype=F64)
    src = torch.tensor([[4, 5, 6, 7, 8], [4, 5, PAD, PAD, PAD]])
    mask = masks.key_padding(src)
    fast, _ = attn(x, mask, memory=memory)
    explicit, weights = attn(x, mask, memory=memory, need_weights=True)
    torch.testing.assert_close(fast, explicit, **EXACT)
    assert weights.shape == (2, 2, 3, 5)
    assert torch.equal(weights[1, :, :, 2:], torch.zeros(2, 3, 3, dtype=F64))
    # what sits in the padded memory slots does not matter
    scrambled = memory.clone()
    scrambled[1, 2:] = 100.0
    torch.testing.assert_close(attn(x, mask, memory=scrambled)[0], fast, **EXACT)


def test_paths_agree_with_an_alibi_float_mask():
    attn = seeded_attention()
    x = torch.randn(2, 4, 8, generator=torch.Generator().manual_seed(2), dtype=F64)
    positions = torch.arange(4)
    allowed = masks.combine(
        masks.key_padding(torch.tensor([[3, 4, 5, 6], [3, 4, PAD, PAD]])),
        masks.causal(positions, positions),
    )
    mask = masks.with_bias(allowed, ALiBi(8, 2, 16).double().bias(positions, positions))
    assert mask.dtype == F64
    fast, _ = attn(x, mask)
    explicit, weights = attn(x, mask, need_weights=True)
    torch.testing.assert_close(fast, explicit, **EXACT)
    blocked = ~allowed.expand_as(weights)
    assert torch.equal(weights[blocked], torch.zeros_like(weights[blocked]))


def test_a_query_with_every_key_blocked_gets_zeros_on_both_paths_not_nan():
    attn = seeded_attention()
    x = torch.randn(1, 2, 8, generator=torch.Generator().manual_seed(3), dtype=F64)
    mask = torch.tensor([[False, False], [True, False]])
    fast, _ = attn(x, mask)
    explicit, weights = attn(x, mask, need_weights=True)
    assert torch.equal(weights[0, :, 0], torch.zeros(2, 2, dtype=F64))
    torch.testing.assert_close(fast, explicit, **EXACT)
    # the blocked query's output is the output projection's bias alone
    torch.testing.assert_close(fast[0, 0], attn.out_proj.bias, **EXACT)


def test_self_attention_with_a_growing_cache_equals_one_causal_pass():
    attn = seeded_attention()
    x = torch.randn(2, 5, 8, generator=torch.Generator().manual_seed(4), dtype=F64)
    positions = torch.arange(5)
    full, _ = attn(x, masks.causal(positions, positions))
    cache = KVCache()
    steps = [attn(x[:, t : t + 1], None, cache=cache)[0] for t in range(5)]
    torch.testing.assert_close(torch.cat(steps, dim=1), full, **EXACT)
    assert cache.k.shape == cache.v.shape == (2, 2, 5, 4)


def test_cross_attention_cache_projects_the_memory_once_and_reuses_it():
    attn = seeded_attention(cross=True)
    gen = torch.Generator().manual_seed(5)
    memory = torch.randn(1, 3, 8, generator=gen, dtype=F64)
    x = torch.randn(1, 2, 8, generator=gen, dtype=F64)
    cache = KVCache()
    first, _ = attn(x[:, :1], None, memory=memory, cache=cache)
    k = cache.k
    second, _ = attn(x[:, 1:], None, memory=torch.zeros_like(memory), cache=cache)
    assert cache.k is k  # not recomputed from the (different) memory passed the second time
    torch.testing.assert_close(
        torch.cat([first, second], dim=1), attn(x, None, memory=memory)[0], **EXACT
    )


def test_kv_cache_reorder_keeps_the_selected_batch_rows():
    k = torch.arange(24.0).view(3, 1, 2, 4)
    cache = KVCache(k=k, v=-k)
    cache.reorder(torch.tensor([2, 0]))
    assert torch.equal(cache.k, k[[2, 0]])
    assert torch.equal(cache.v, -k[[2, 0]])
    empty = KVCache()
    empty.reorder(torch.tensor([0]))
    assert empty.k is None and empty.v is None
