"""Property tests over random small models and random padded batches."""

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transformer_lab.model import Seq2SeqTransformer
from transformer_lab.model.layers import FFNS
from transformer_lab.model.positional import POSITIONAL_ENCODINGS
from transformer_lab.tokens import BOS, PAD

VOCAB = 12
NORMS = ["post", "pre"]
ENCODINGS = list(POSITIONAL_ENCODINGS)


@st.composite
def models(draw):
    heads = draw(st.sampled_from([1, 2, 4]))
    model = Seq2SeqTransformer(
        VOCAB,
        VOCAB,
        d_model=heads * draw(st.sampled_from([2, 4, 8])),
        num_heads=heads,
        num_encoder_layers=draw(st.integers(1, 2)),
        num_decoder_layers=draw(st.integers(1, 2)),
        d_ff=16,
        dropout=0.0,
        norm=draw(st.sampled_from(NORMS)),
        pos_encoding=draw(st.sampled_from(ENCODINGS)),
        activation=draw(st.sampled_from(list(FFNS))),
        max_len=24,
        init_seed=draw(st.integers(0, 2**16)),
    )
    # float64: the properties are exact, and float32's rounding (a d_model-2 LayerNorm
    # turns 1e-7 into 1e-5) would pass for a violation or fail an exact model
    return model.double().eval()


@st.composite
def padded(draw, rows: int, max_len: int, first=None):
    """``[rows, L]`` content tokens, each row right-padded after a random length >= 1."""
    lengths = draw(st.lists(st.integers(1, max_len), min_size=rows, max_size=rows))
    width = max(lengths)
    tokens = torch.tensor(
        draw(
            st.lists(
                st.lists(st.integers(3, VOCAB - 1), min_size=width, max_size=width),
                min_size=rows,
                max_size=rows,
            )
        )
    )
    for row, length in enumerate(lengths):
        tokens[row, length:] = PAD
        if first is not None:
            tokens[row, 0] = first
    return tokens


@st.composite
def batches(draw):
    rows = draw(st.integers(1, 3))
    return draw(padded(rows, 8)), draw(padded(rows, 8, first=BOS))


PROPERTY = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(model=models(), batch=batches(), data=st.data())
def test_logits_are_finite_and_earlier_positions_ignore_later_target_tokens(model, batch, data):
    src, tgt_in = batch
    logits = model(src, tgt_in)
    assert torch.isfinite(logits).all()
    cut = data.draw(st.integers(1, tgt_in.size(1)))
    changed = tgt_in.clone()
    changed[:, cut:] = torch.randint(3, VOCAB, changed[:, cut:].shape)
    torch.testing.assert_close(model(src, changed)[:, :cut], logits[:, :cut])


@PROPERTY
@given(model=models(), batch=batches(), extra=st.integers(1, 4))
def test_appending_source_padding_changes_no_logit(model, batch, extra):
    src, tgt_in = batch
    padded_src = torch.cat([src, torch.full((src.size(0), extra), PAD)], dim=1)
    torch.testing.assert_close(model(padded_src, tgt_in), model(src, tgt_in))


@PROPERTY
@given(model=models(), batch=batches(), steps=st.integers(1, 10))
def test_cached_generation_equals_recomputation(model, batch, steps):
    src, _ = batch
    assert torch.equal(
        model.generate(src, steps, use_cache=True), model.generate(src, steps, use_cache=False)
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("pos", ENCODINGS)
def test_heavy_padding_gives_no_nan_in_outputs_or_gradients(dtype, training, pos):
    """Padding queries and PAD keys everywhere; SDPA and explicit paths; fp32 and bf16."""
    model = Seq2SeqTransformer(
        VOCAB, VOCAB, 16, 2, 2, 2, 32, 0.1, "pre", pos, "relu", 24, init_seed=0
    ).train(training)
    src = torch.tensor([[5, 6, 7, 8, 9, 2], [5, 2, 0, 0, 0, 0], [2, 0, 0, 0, 0, 0]])
    tgt_in = torch.tensor([[BOS, 5, 6, 7], [BOS, 0, 0, 0], [BOS, 4, 0, 0]])
    with torch.autocast("cpu", dtype=dtype, enabled=dtype != torch.float32):
        logits = model(src, tgt_in)
        weighted, attention = model(src, tgt_in, return_attention=True)
        logits.float().sum().backward()
    assert torch.isfinite(logits.float()).all() and torch.isfinite(weighted.float()).all()
    for weights in (*attention["encoder"], *attention["decoder_self"], *attention["cross"]):
        assert torch.isfinite(weights.float()).all()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)
