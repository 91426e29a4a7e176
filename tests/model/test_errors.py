"""Bad settings and bad input raise ValueError naming the setting and what is allowed."""

import re

import pytest
import torch

from transformer_lab.model import Seq2SeqTransformer
from transformer_lab.tokens import BOS, PAD

SMALL = dict(
    src_vocab_size=9,
    tgt_vocab_size=9,
    d_model=8,
    num_heads=2,
    num_encoder_layers=1,
    num_decoder_layers=1,
    d_ff=16,
    max_len=6,
)


def build(**overrides) -> Seq2SeqTransformer:
    return Seq2SeqTransformer(**{**SMALL, **overrides})


def test_d_model_not_divisible_by_num_heads_is_rejected():
    with pytest.raises(
        ValueError,
        match=r"d_model must be divisible by num_heads; "
        r"got d_model=10, num_heads=4",
    ):
        build(d_model=10, num_heads=4)


def test_odd_d_model_is_rejected_for_sinusoidal_positions():
    with pytest.raises(ValueError, match=r"d_model must be even for pos_encoding='sinusoidal'"):
        build(d_model=9, num_heads=3, pos_encoding="sinusoidal")
    build(d_model=9, num_heads=3, pos_encoding="learned")  # other encodings accept it


def test_odd_head_dimension_is_rejected_for_rotary_positions():
    with pytest.raises(
        ValueError, match=r"head dimension .* must be even for pos_encoding='rotary'; got 12/4=3"
    ):
        build(d_model=12, num_heads=4, pos_encoding="rotary")
    build(d_model=12, num_heads=4, pos_encoding="sinusoidal")  # even d_model, odd head dim: fine


def test_a_source_longer_than_max_len_is_rejected():
    model = build()
    src = torch.full((1, 7), 5)
    with pytest.raises(ValueError, match=r"the source needs 7 positions but max_len=6"):
        model(src, torch.tensor([[BOS]]))
    with pytest.raises(ValueError, match=r"max_len=6"):
        model.generate(src, max_new_tokens=2)
    model(src[:, :6], torch.tensor([[BOS]]))  # exactly max_len is fine


def test_a_target_longer_than_max_len_is_rejected():
    model = build()
    with pytest.raises(ValueError, match=r"the target needs 7 positions but max_len=6"):
        model(torch.full((1, 3), 5), torch.full((1, 7), 5))
    model(torch.full((1, 3), 5), torch.full((1, 6), 5))  # exactly max_len is fine


def test_max_new_tokens_beyond_max_len_is_rejected():
    model = build()
    with pytest.raises(
        ValueError,
        match=re.escape("generation (BOS + max_new_tokens - 1) needs 7 positions but max_len=6"),
    ):
        model.generate(torch.full((1, 3), 5), max_new_tokens=7)


@pytest.mark.parametrize("max_new_tokens", [0, -1])
def test_max_new_tokens_below_one_is_rejected(max_new_tokens):
    with pytest.raises(ValueError, match=rf"max_new_tokens must be >= 1; got {max_new_tokens}"):
        build().generate(torch.full((1, 3), 5), max_new_tokens=max_new_tokens)


def test_an_all_padding_source_row_is_rejected_by_forward_encode_and_generate():
    model = build()
    src = torch.tensor([[5, 6, PAD], [PAD, PAD, PAD], [7, PAD, PAD], [PAD, PAD, PAD]])
    message = re.escape("source rows [1, 3] are all padding (PAD=0)")
    with pytest.raises(ValueError, match=message):
        model(src, torch.full((4, 2), BOS))
    with pytest.raises(ValueError, match=message):
        model.encode(src)
    with pytest.raises(ValueError, match=message):
        model.generate(src, max_new_tokens=2)


@pytest.mark.parametrize(
    ("setting", "value", "allowed"),
    [
        ("norm", "peri", "post, pre, sandwich, deepnorm"),
        ("norm_type", "batchnorm", "layernorm, rmsnorm"),
        ("pos_encoding", "relative", "sinusoidal, learned, rotary, alibi, none"),
        ("activation", "tanh", "relu, gelu, swiglu"),
    ],
)
def test_unknown_names_are_rejected_with_the_list_of_allowed_names(setting, value, allowed):
    with pytest.raises(
        ValueError, match=re.escape(f"unknown {setting}='{value}'; allowed: {allowed}")
    ):
        build(**{setting: value})


@pytest.mark.parametrize(
    "setting",
    [
        "src_vocab_size",
        "tgt_vocab_size",
        "d_model",
        "num_heads",
        "num_encoder_layers",
        "num_decoder_layers",
        "d_ff",
        "max_len",
    ],
)
@pytest.mark.parametrize("value", [0, -2])
def test_non_positive_sizes_are_rejected(setting, value):
    with pytest.raises(ValueError, match=rf"{setting} must be a positive integer; got {value}"):
        build(**{setting: value})


@pytest.mark.parametrize("dropout", [-0.1, 1.0, 1.5])
def test_dropout_outside_zero_to_one_is_rejected(dropout):
    with pytest.raises(ValueError, match=re.escape(f"dropout must be in [0, 1); got {dropout}")):
        build(dropout=dropout)


@pytest.mark.parametrize("dropout", [0.0, 0.999])
def test_dropout_at_the_edges_of_its_range_is_accepted(dropout):
    assert build(dropout=dropout).embed_dropout.p == dropout
