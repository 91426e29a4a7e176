"""What each term of the input sum weighs at initialisation: the scaled token embeddings,
the sinusoid and the learned table, so that ``learned`` starts on the sinusoid's footing."""

import math

import pytest
import torch

from transformer_lab.model import Seq2SeqTransformer


def build(pos_encoding: str, d_model: int, max_len: int) -> Seq2SeqTransformer:
    return Seq2SeqTransformer(
        src_vocab_size=4000,
        tgt_vocab_size=20,
        d_model=d_model,
        num_heads=4,
        num_encoder_layers=1,
        num_decoder_layers=1,
        d_ff=32,
        pos_encoding=pos_encoding,
        max_len=max_len,
        init_seed=0,
    )


def added_term(model: Seq2SeqTransformer) -> torch.Tensor:
    """What the encoder's encoding adds to the token embeddings, ``[max_len, d_model]``."""
    positions = torch.arange(model.max_len)
    return model.src_pos.add(torch.zeros(1, model.max_len, model.d_model), positions)[0]


@pytest.mark.parametrize("d_model", [16, 64, 256])
def test_the_learned_table_has_the_sinusoids_scale_whatever_d_model(d_model):
    max_len = 256_000 // d_model  # 256,000 draws: the standard error of the std is ~0.14%
    learned = added_term(build("learned", d_model, max_len))
    sinusoid = added_term(build("sinusoidal", d_model, max_len))
    # every sinusoid row has squared norm d_model / 2 exactly: RMS sqrt(1/2) per component
    torch.testing.assert_close(
        sinusoid.pow(2).sum(-1), torch.full((max_len,), d_model / 2), rtol=1e-5, atol=0
    )
    assert learned.std().item() == pytest.approx(math.sqrt(0.5), rel=0.01)
    assert abs(learned.mean().item()) < 0.01
    assert learned.pow(2).sum(-1).mean().item() == pytest.approx(d_model / 2, rel=0.01)


def test_tokens_weigh_1_per_component_and_positions_0_71_for_both_additive_encodings():
    """The measurement at the main job's d_model 64: tokens N(0, 1/8) times sqrt(64) = 8."""
    d_model = 64
    for pos_encoding in ("sinusoidal", "learned"):
        model = build(pos_encoding, d_model, max_len=4000)
        tokens = model.src_embed.weight * model.embed_scale  # [4000, 64] each token's term
        assert tokens.std().item() == pytest.approx(1.0, rel=0.01)
        position_rms = added_term(model).pow(2).mean().sqrt().item()
        assert position_rms == pytest.approx(math.sqrt(0.5), rel=0.01), pos_encoding
