"""Bad settings raise InvalidSetting and bad input ValueError, naming the setting (or the
input) and what is allowed."""

import re

import pytest
import torch

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.model import Seq2SeqTransformer
from transformer_lab.model.layers import FFNS
from transformer_lab.model.norms import NORM_TYPES
from transformer_lab.model.positional import POSITIONAL_ENCODINGS
from transformer_lab.model.residual import NORM_PLACEMENTS
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
    message = "d_model=10: not divisible by num_heads=4; allowed: a multiple of num_heads"
    with pytest.raises(InvalidSetting, match=re.escape(message)):
        build(d_model=10, num_heads=4)


def test_odd_d_model_is_rejected_for_sinusoidal_positions():
    message = "d_model=9: odd, and pos_encoding='sinusoidal' fills sin/cos pairs; allowed: an even"
    with pytest.raises(InvalidSetting, match=re.escape(message)):
        build(d_model=9, num_heads=3, pos_encoding="sinusoidal")
    build(d_model=9, num_heads=3, pos_encoding="learned")  # other encodings accept it


def test_odd_head_dimension_is_rejected_for_rotary_positions():
    message = "d_model=12: the head dimension d_model/num_heads=12/4=3 is odd, and pos_encoding="
    with pytest.raises(InvalidSetting, match=re.escape(message)):
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
        ("norm", "peri", ", ".join(NORM_PLACEMENTS)),
        ("norm_type", "batchnorm", ", ".join(NORM_TYPES)),
        ("pos_encoding", "relative", ", ".join(POSITIONAL_ENCODINGS)),
        ("activation", "tanh", ", ".join(FFNS)),
    ],
)
def test_unknown_names_are_rejected_with_the_list_of_allowed_names(setting, value, allowed):
    message = f"{setting}='{value}': unknown; allowed: {allowed}"
    with pytest.raises(InvalidSetting, match=re.escape(message)):
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
@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (0, "out of range"),
        (-2, "out of range"),
        (2.0, "not an integer"),
        ("8", "not an integer"),
        (True, "not an integer"),
    ],
)
def test_sizes_other_than_positive_integers_are_rejected(setting, value, reason):
    message = f"{setting}={value!r}: {reason}; allowed: an integer >= 1"
    with pytest.raises(InvalidSetting, match=re.escape(message)):
        build(**{setting: value})


@pytest.mark.parametrize(
    ("dropout", "reason"),
    [
        (-0.1, "out of range"),
        (1.0, "out of range"),
        (1.5, "out of range"),
        ("0.1", "not a number"),
        (float("nan"), "out of range"),
    ],
)
def test_dropout_other_than_a_number_in_zero_to_one_is_rejected(dropout, reason):
    message = f"dropout={dropout!r}: {reason}; allowed: a number in [0, 1)"
    with pytest.raises(InvalidSetting, match=re.escape(message)):
        build(dropout=dropout)


def test_a_flag_or_a_seed_of_the_wrong_kind_is_rejected():
    with pytest.raises(InvalidSetting, match=re.escape("tie_embeddings='no': not a boolean")):
        build(tie_embeddings="no")  # a non-empty string would have tied them
    message = "init_seed=-1: out of range; allowed: an integer in [0, 18446744073709551615]"
    with pytest.raises(InvalidSetting, match=re.escape(message)):
        build(init_seed=-1)
    build(init_seed=None)  # None: the global RNG draws the weights


@pytest.mark.parametrize("dropout", [0.0, 0.999])
def test_dropout_at_the_edges_of_its_range_is_accepted(dropout):
    assert build(dropout=dropout).embed_dropout.p == dropout
