"""The network's typed config: each default once with its help, the one dict that rebuilds
the model, and the keyword API built on it."""

import dataclasses
import io

import pytest
import torch

from transformer_lab.model import Seq2SeqTransformer
from transformer_lab.model.config import KEYWORDS, StackConfig, TransformerConfig

SMALL = dict(src_vocab_size=13, tgt_vocab_size=11, d_model=16, num_heads=2, d_ff=32)


@pytest.mark.parametrize("config", [TransformerConfig, StackConfig])
def test_every_field_has_a_one_line_help(config):
    for field in dataclasses.fields(config):
        text = field.metadata.get("help", "")
        assert text and "\n" not in text, field.name


def test_the_dict_a_model_saves_rebuilds_it_weight_for_weight():
    model = Seq2SeqTransformer(
        **SMALL, norm="pre", decoder_norm="deepnorm", encoder_pos_encoding="alibi", init_seed=3
    )
    saved = io.BytesIO()
    torch.save(model.config.to_dict(), saved)  # primitives only: a weights_only load takes it
    saved.seek(0)
    rebuilt = Seq2SeqTransformer(
        config=TransformerConfig.from_dict(torch.load(saved, weights_only=True))
    )
    assert rebuilt.config == model.config
    assert model.config.to_dict()["decoder"] == {"norm": "deepnorm", "pos_encoding": None}
    a, b = model.state_dict(), rebuilt.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_keywords_positional_arguments_and_a_config_build_the_same_model():
    by_keyword = Seq2SeqTransformer(**SMALL, activation="swiglu", init_seed=0)
    config = by_keyword.config
    assert TransformerConfig.from_keywords(**config.keywords()) == config
    by_position = Seq2SeqTransformer(13, 11, 16, 2, 6, 6, 32, 0.1, "post", "sinusoidal", "swiglu")
    assert dataclasses.replace(by_position.config, init_seed=0) == config
    assert Seq2SeqTransformer(config=config).config is config


def test_each_stacks_own_choice_is_its_node_and_falls_back_to_the_shared_one():
    config = TransformerConfig(**SMALL, norm="pre", encoder=StackConfig(norm="post"))
    assert [config.stack(s, "norm") for s in ("encoder", "decoder")] == ["post", "pre"]
    assert config.keywords()["encoder_norm"] == "post" and config.keywords()["decoder_norm"] is None


def test_a_config_and_keywords_together_are_refused():
    config = TransformerConfig(**SMALL)
    count = len(KEYWORDS.names)  # 20: 16 fields, and a keyword for each choice of each stack
    with pytest.raises(TypeError, match=f"takes a config, or at most {count} positional"):
        Seq2SeqTransformer(config=config, d_model=32)
    with pytest.raises(TypeError, match="unexpected keyword argument 'd_modle'"):
        Seq2SeqTransformer(13, 11, d_modle=32)
