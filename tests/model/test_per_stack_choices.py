"""A stack's own norm placement and positional encoding (``encoder_norm``, ``decoder_norm``,
``encoder_pos_encoding``, ``decoder_pos_encoding``): each stack behaves as the stack of the
model that uses its choice everywhere, and both stacks set alike build that model."""

import re

import pytest
import torch
from torch import nn

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.model.positional import ALiBi, Learned, Rotary, Sinusoidal
from transformer_lab.model.residual import NORM_PLACEMENTS, deepnorm_scales

from .conftest import NORMS, POS_ENCODINGS, tiny_model


def other(choice: str, choices) -> str:
    """A choice that is not ``choice``, for the shared setting the per-stack ones override."""
    return next(c for c in choices if c != choice)


@pytest.mark.parametrize("pos_encoding", POS_ENCODINGS)
@pytest.mark.parametrize("norm", NORMS)
def test_both_stacks_set_alike_build_the_shared_model_weight_for_weight(norm, pos_encoding, batch):
    shared = tiny_model(norm, pos_encoding)
    per_stack = tiny_model(
        other(norm, NORMS),
        other(pos_encoding, POS_ENCODINGS),
        encoder_norm=norm,
        decoder_norm=norm,
        encoder_pos_encoding=pos_encoding,
        decoder_pos_encoding=pos_encoding,
    )
    assert str(per_stack) == str(shared)  # the same modules, in the same order
    a, b = shared.state_dict(), per_stack.state_dict()
    assert a.keys() == b.keys()
    for name in a:
        assert torch.equal(a[name], b[name]), name
    src, tgt_in = batch
    assert torch.equal(per_stack(src, tgt_in), shared(src, tgt_in))


HYBRIDS = [
    # (encoder_norm, decoder_norm, encoder_pos_encoding, decoder_pos_encoding)
    ("post", "pre", "sinusoidal", "sinusoidal"),  # Liu et al.'s control and its reverse
    ("pre", "post", "sinusoidal", "sinusoidal"),
    ("deepnorm", "pre", "rotary", "rotary"),
    ("sandwich", "deepnorm", "learned", "learned"),
    ("post", "post", "alibi", "sinusoidal"),
    ("post", "post", "learned", "rotary"),
    ("pre", "post", "none", "learned"),
]


@pytest.mark.parametrize(("enc_norm", "dec_norm", "enc_pos", "dec_pos"), HYBRIDS)
def test_each_stack_computes_what_the_stack_of_its_own_choice_computes(
    enc_norm, dec_norm, enc_pos, dec_pos, batch
):
    """The hybrid's memory is that of the model with the encoder's choices everywhere (same
    init_seed: same weights); its logits over that memory are those of the model with the
    decoder's choices everywhere, given the hybrid's weights (a learned decoder table
    behind an encoder without one is drawn where the encoder's table would be drawn)."""
    src, tgt_in = batch
    hybrid = tiny_model(
        "post",
        "sinusoidal",
        encoder_norm=enc_norm,
        decoder_norm=dec_norm,
        encoder_pos_encoding=enc_pos,
        decoder_pos_encoding=dec_pos,
    )
    as_encoder, as_decoder = tiny_model(enc_norm, enc_pos), tiny_model(dec_norm, dec_pos)
    memory = hybrid.encode(src)
    assert torch.equal(memory, as_encoder.encode(src))
    missing, unexpected = as_decoder.load_state_dict(hybrid.state_dict(), strict=False)
    # what the decoder never reads
    encoder_only = re.compile(r"^(src_embed|src_pos|encoder_layers|encoder_norm)\.")
    assert all(encoder_only.match(k) for k in missing + unexpected), (missing, unexpected)
    assert torch.equal(hybrid.decode(tgt_in, memory, src), as_decoder.decode(tgt_in, memory, src))
    if dec_norm != enc_norm:  # each stack really has its own placement
        assert not torch.equal(hybrid(src, tgt_in), as_encoder(src, tgt_in))


def residuals(layers: nn.ModuleList) -> list[nn.Module]:
    return [m for layer in layers for n, m in layer.named_children() if n.endswith("residual")]


def test_a_post_norm_encoder_with_a_pre_norm_decoder_normalises_where_each_placement_does():
    model = tiny_model("post", encoder_norm="post", decoder_norm="pre")
    assert [r.before for r in residuals(model.encoder_layers)] == [False] * 4  # 2 x 2 sublayers
    assert [r.before for r in residuals(model.decoder_layers)] == [True] * 6  # 2 x 3
    assert isinstance(model.encoder_norm, nn.Identity)  # post: no final stack norm
    assert isinstance(model.decoder_norm, nn.LayerNorm)  # pre: one
    reverse = tiny_model("post", encoder_norm="pre", decoder_norm="post")
    assert isinstance(reverse.encoder_norm, nn.LayerNorm)
    assert isinstance(reverse.decoder_norm, nn.Identity)


def test_deepnorm_constants_and_branch_scaling_belong_to_the_deepnorm_stack_alone():
    """DeepNet's encoder constants depend on both depths; the deepnorm encoder keeps them
    in front of a pre-norm decoder, whose residuals and branch weights stay unscaled."""
    deep = tiny_model("deepnorm", num_encoder_layers=3, num_decoder_layers=2)
    hybrid = tiny_model(
        "post",
        encoder_norm="deepnorm",
        decoder_norm="pre",
        num_encoder_layers=3,
        num_decoder_layers=2,
    )
    plain = tiny_model("post", num_encoder_layers=3, num_decoder_layers=2)
    (enc_alpha, enc_beta), _ = deepnorm_scales("deepnorm", 3, 2)
    assert enc_alpha == pytest.approx(0.81 * (3**4 * 2) ** (1 / 16))
    assert [r.alpha for r in residuals(hybrid.encoder_layers)] == [enc_alpha] * 6
    assert [r.alpha for r in residuals(hybrid.decoder_layers)] == [1.0] * 6
    w2 = "ffn.w2.weight"
    for i in range(3):
        torch.testing.assert_close(
            hybrid.encoder_layers[i].state_dict()[w2],
            enc_beta * plain.encoder_layers[i].state_dict()[w2],
            rtol=1e-6,  # scaled in float32, then compared in float64
            atol=0,
        )
        assert torch.equal(
            hybrid.encoder_layers[i].state_dict()[w2], deep.encoder_layers[i].state_dict()[w2]
        )
    for i in range(2):
        assert torch.equal(
            hybrid.decoder_layers[i].state_dict()[w2], plain.decoder_layers[i].state_dict()[w2]
        )


def test_each_stack_gets_the_positional_encoding_it_names():
    model = tiny_model(
        "post", "sinusoidal", encoder_pos_encoding="alibi", decoder_pos_encoding="learned"
    )
    assert (type(model.src_pos), type(model.tgt_pos)) == (ALiBi, Learned)
    model = tiny_model("post", "alibi", decoder_pos_encoding="rotary")
    assert (type(model.src_pos), type(model.tgt_pos)) == (ALiBi, Rotary)
    model = tiny_model("post", "alibi", encoder_pos_encoding="sinusoidal")
    assert (type(model.src_pos), type(model.tgt_pos)) == (Sinusoidal, ALiBi)


@pytest.mark.parametrize(
    ("setting", "value", "allowed"),
    [
        ("encoder_norm", "peri", ", ".join(NORM_PLACEMENTS)),
        ("decoder_norm", "Pre", ", ".join(NORM_PLACEMENTS)),
        ("encoder_pos_encoding", "relative", ", ".join(POS_ENCODINGS)),
        ("decoder_pos_encoding", 3, ", ".join(POS_ENCODINGS)),
    ],
)
def test_an_unknown_per_stack_choice_is_refused_by_its_own_name(setting, value, allowed):
    message = f"{setting}={value!r}: unknown; allowed: {allowed}"
    with pytest.raises(InvalidSetting, match=re.escape(message)):
        tiny_model(**{setting: value})
