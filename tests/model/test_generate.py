"""Greedy generation, the decoder cache, and incremental decoding at absolute positions."""

import pytest
import torch

from transformer_lab.model.decoding import beam_search, sample
from transformer_lab.tokens import BOS, EOS, PAD

MAX_NEW = 8
SEARCHES = {  # name -> (tokens a step keeps, (model, src, use_cache) -> tokens)
    "greedy": (1, lambda m, s, c: m.generate(s, MAX_NEW, use_cache=c)),
    "beam1": (1, lambda m, s, c: beam_search(m, s, 1, MAX_NEW, use_cache=c)),
    "beam3": (3, lambda m, s, c: beam_search(m, s, 3, MAX_NEW, use_cache=c)),
    "beam3-penalty": (3, lambda m, s, c: beam_search(m, s, 3, MAX_NEW, 1.0, use_cache=c)),
    "sample": (1, lambda m, s, c: sample(m, s, MAX_NEW, 0.7, top_k=4, seed=0, use_cache=c)),
}


def generation_source() -> torch.Tensor:
    """Six source rows of lengths 7, 3, 5, 1, 6, 4 (right padded)."""
    gen = torch.Generator().manual_seed(7)
    rows = [torch.randint(3, 13, (n,), generator=gen).tolist() for n in (7, 3, 5, 1, 6, 4)]
    return torch.tensor([r + [PAD] * (7 - len(r)) for r in rows])


def blocked_specials(logits: torch.Tensor) -> torch.Tensor:
    logits = logits.clone()
    logits[..., [PAD, BOS]] = float("-inf")
    return logits


def bias_eos_to_split_the_batch(model, src: torch.Tensor, rank: int = 1) -> None:
    """Raise the output bias of EOS so that it ranks in the top ``rank`` tokens at step 1
    in exactly 3 of the 6 rows (``rank=1``: exactly 3 rows pick EOS at step 1).

    Each row's margin (the ``rank``-th best other token minus EOS at the first step) is
    measured; the bias is set halfway between the 3rd and 4th smallest margins, so rows
    finish at different steps whatever the random weights are.
    """
    with torch.no_grad():
        first = model.decode(torch.full((src.size(0), 1), BOS), model.encode(src), src)[:, -1]
        first = blocked_specials(first)
        others = first.clone()
        others[:, EOS] = float("-inf")
        margins = (others.topk(rank).values[:, -1] - first[:, EOS]).sort().values
        model.output.bias[EOS] += (margins[2] + margins[3]) / 2


def finish_steps(out: torch.Tensor) -> list[int | None]:
    """Per row, the index of its EOS in ``out`` (None if it never emitted one)."""
    return [row.index(EOS) if EOS in row else None for row in out.tolist()]


@pytest.fixture(scope="module")
def searched(make_model):
    """``searched(norm, pos_encoding, search, use_cache) -> tokens`` of ``search`` over
    :func:`generation_source`, on a model whose EOS bias splits the batch for that search.

    Several tests check the same search; it runs once per module and they share the
    result (a search leaves the model as it found it).
    """
    models, results = {}, {}

    def run(norm: str, pos_encoding: str, search: str, use_cache: bool = True) -> torch.Tensor:
        rank, decode = SEARCHES[search]
        if (norm, pos_encoding, rank) not in models:
            model = make_model(norm, pos_encoding)
            bias_eos_to_split_the_batch(model, generation_source(), rank)
            models[norm, pos_encoding, rank] = model
        key = (norm, pos_encoding, search, use_cache)
        if key not in results:
            results[key] = decode(models[norm, pos_encoding, rank], generation_source(), use_cache)
        return results[key]

    return run


def test_generate_with_and_without_cache_gives_identical_tokens(searched, norm, pos_encoding):
    cached = searched(norm, pos_encoding, "greedy")
    recomputed = searched(norm, pos_encoding, "greedy", use_cache=False)
    steps = finish_steps(cached)
    assert steps.count(1) == 3 and len(set(steps)) > 1  # rows finish at different steps
    assert cached.size(1) > 2  # the unfinished rows went on after step 1
    assert torch.equal(cached, recomputed)


@pytest.mark.parametrize("search", [s for s in SEARCHES if s != "greedy"])  # greedy: above
def test_beam_search_and_sampling_with_and_without_cache_give_identical_tokens(
    searched, norm, pos_encoding, search
):
    # the EOS bias lets half the rows finish at step 1
    cached = searched(norm, pos_encoding, search)
    if SEARCHES[search][0] == 1:  # (a wider beam may still prefer a longer answer in every row)
        assert len(set(finish_steps(cached))) > 1  # rows end at different steps
    assert torch.equal(cached, searched(norm, pos_encoding, search, use_cache=False))


def test_beam_size_1_equals_greedy_exactly(searched, norm, pos_encoding):
    assert torch.equal(
        searched(norm, pos_encoding, "beam1"), searched(norm, pos_encoding, "greedy")
    )


@pytest.mark.parametrize("search", SEARCHES)
def test_generated_rows_start_with_bos_and_have_only_pad_after_eos(
    searched, norm, pos_encoding, search
):
    src = generation_source()
    out = searched(norm, pos_encoding, search)
    assert out.dtype == torch.long
    assert out.size(0) == src.size(0) and 2 <= out.size(1) <= 1 + MAX_NEW
    assert (out[:, 0] == BOS).all()
    assert not (out[:, 1:] == BOS).any()
    for row, eos_at in zip(out.tolist(), finish_steps(out), strict=True):
        end = len(row) if eos_at is None else eos_at
        assert PAD not in row[:end]  # no PAD before EOS
        assert all(token >= 3 for token in row[1:end])  # content tokens only in between
        assert row[end + 1 :] == [PAD] * (len(row) - end - 1)  # only PAD after EOS
        if eos_at is None:
            assert len(row) == 1 + MAX_NEW  # a row without EOS ran to the limit


def test_cached_decoding_logits_equal_full_recompute_logits_at_every_step(
    make_model, norm, pos_encoding
):
    model = make_model(norm, pos_encoding, dtype=torch.float32)  # the default dtype
    src = generation_source()
    out = model.generate(src, max_new_tokens=MAX_NEW)
    assert out.size(1) > 3
    with torch.no_grad():
        memory = model.encode(src)
        cache = model.new_cache()
        for t in range(out.size(1) - 1):
            step = model.decode(out[:, t : t + 1], memory, src, cache=cache)[:, -1]
            full = model.decode(out[:, : t + 1], memory, src)[:, -1]
            assert cache.length == t + 1
            torch.testing.assert_close(step, full, atol=1e-5, rtol=0)
            # and generate picked the greedy token for every row still running
            running = ~(out[:, : t + 1] == EOS).any(-1)
            greedy = blocked_specials(full).argmax(-1)
            assert torch.equal(out[running, t + 1], greedy[running])


def test_generate_stops_as_soon_as_every_row_has_emitted_eos(make_model):
    model = make_model()
    with torch.no_grad():
        model.output.bias[EOS] = 1e4
    out = model.generate(generation_source(), max_new_tokens=MAX_NEW)
    assert out.tolist() == [[BOS, EOS]] * 6


def test_generate_without_eos_runs_exactly_max_new_tokens(make_model):
    model = make_model()
    with torch.no_grad():
        model.output.bias[EOS] = -1e4
    out = model.generate(generation_source(), max_new_tokens=MAX_NEW)
    assert out.shape == (6, 1 + MAX_NEW)
    assert (out[:, 1:] >= 3).all()


def test_generate_may_use_every_position_up_to_max_len(make_model):
    model = make_model(pos_encoding="learned", max_len=6)
    with torch.no_grad():
        model.output.bias[EOS] = -1e4
    src = generation_source()[:, :6]
    cached = model.generate(src, max_new_tokens=6)
    assert cached.shape == (6, 7)
    assert torch.equal(cached, model.generate(src, max_new_tokens=6, use_cache=False))


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_generate_restores_the_callers_mode_and_decodes_without_dropout(make_model, mode):
    model = make_model(dropout=0.5)
    src = generation_source()
    expected = model.generate(src, max_new_tokens=MAX_NEW)  # in eval mode
    model.train(mode == "train")
    torch.manual_seed(0)
    assert torch.equal(model.generate(src, max_new_tokens=MAX_NEW), expected)
    assert all(m.training == (mode == "train") for m in model.modules())


@pytest.mark.parametrize("chunks", [(2, 4), (4, 2), (1, 2, 3)], ids=str)
def test_decoding_in_chunks_with_a_cache_equals_the_one_pass_logits(
    make_model, norm, pos_encoding, batch, chunks
):
    model = make_model(norm, pos_encoding)
    src, tgt_in = batch  # rows end in padding at different chunks
    assert sum(chunks) == tgt_in.size(1)
    with torch.no_grad():
        memory = model.encode(src)
        one_pass = model.decode(tgt_in, memory, src)
        cache, pieces, start = model.new_cache(), [], 0
        for size in chunks:
            assert cache.length == start  # the chunk starts at its absolute position
            pieces.append(model.decode(tgt_in[:, start : start + size], memory, src, cache=cache))
            start += size
    torch.testing.assert_close(torch.cat(pieces, dim=1), one_pass, atol=1e-12, rtol=0)


def test_decoding_past_max_len_with_a_cache_is_an_error(make_model):
    model = make_model(max_len=4)
    src = generation_source()[:, :4]
    with torch.no_grad():
        memory, cache = model.encode(src), model.new_cache()
        model.decode(torch.full((6, 3), BOS), memory, src, cache=cache)
        with pytest.raises(ValueError, match=r"the target needs 5 positions but max_len=4"):
            model.decode(torch.full((6, 2), 5), memory, src, cache=cache)


def test_decoder_cache_reorder_selects_rows_of_every_layer_and_the_padding(make_model):
    model = make_model()  # two decoder layers
    src = torch.tensor([[3, 4, 5], [6, 7, PAD], [8, PAD, PAD]])
    tgt_in = torch.tensor([[BOS, 3, 4], [BOS, 5, PAD], [BOS, 6, 7]])
    with torch.no_grad():
        memory = model.encode(src)
        cache = model.new_cache()
        model.decode(tgt_in[:, :2], memory, src, cache=cache)
        order = torch.tensor([2, 0])
        cache.reorder(order)
        step = model.decode(tgt_in[order, 2:], memory[order], src[order], cache=cache)
        full = model.decode(tgt_in[order], memory[order], src[order])[:, 2:]
    torch.testing.assert_close(step, full, atol=1e-12, rtol=0)
