"""Every registered option is told its stack and given its own settings, which the one
unknown-key check refuses key by key and the saved config rebuilds: shown with a probe
encoding registered for the test alone, so that the contract holds for any option."""

import io
import re
from dataclasses import dataclass, field

import pytest
import torch
from torch import nn

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.model import Seq2SeqTransformer, TransformerConfig
from transformer_lab.model.config import AXES, StackConfig
from transformer_lab.model.norms import NORM_TYPES
from transformer_lab.model.options import DECODER, ENCODER, Option
from transformer_lab.model.positional import POSITIONAL_ENCODINGS, PositionalEncoding

SMALL = dict(src_vocab_size=13, tgt_vocab_size=11, d_model=16, num_heads=2, d_ff=32)


@dataclass(frozen=True)
class ProbeSettings:
    scale: float = field(default=1.0, metadata={"help": "the bias of a key one step back"})


class Probe(PositionalEncoding):
    """Biases a key one step back by ``scale``, in a causal stack only."""

    Settings = ProbeSettings
    biases = True

    def bias(self, q_positions, k_positions):
        behind = (q_positions[:, None] - k_positions[None, :] == 1).float()  # [L_q, L_k]
        return (self.settings.scale * self.stack.causal * behind).expand(2, -1, -1)


@pytest.fixture
def probe():
    POSITIONAL_ENCODINGS.register("probe")(Probe)
    yield "probe"
    del POSITIONAL_ENCODINGS["probe"]


def test_each_option_of_the_network_is_told_the_stack_it_sits_in():
    """The encodings and the FFNs, options by their base classes."""
    model = Seq2SeqTransformer(**SMALL, num_encoder_layers=1, num_decoder_layers=1, norm="pre")
    told = {
        name: module.stack for name, module in model.named_modules() if isinstance(module, Option)
    }
    assert told == {
        "src_pos": ENCODER,
        "tgt_pos": DECODER,
        "encoder_layers.0.ffn": ENCODER,
        "decoder_layers.0.ffn": DECODER,
    }


class PlainNorm(nn.Module):
    """A norm type as a contributor may write one: no Option, built from d_model alone."""

    def __init__(self, d_model: int):
        super().__init__()
        self.d_model = d_model

    def forward(self, x):
        return x / x.norm(dim=-1, keepdim=True)


def test_a_registered_class_that_is_no_option_is_built_from_its_sizes_alone(monkeypatch):
    monkeypatch.setitem(NORM_TYPES, "plain", PlainNorm)
    model = Seq2SeqTransformer(
        **SMALL, num_encoder_layers=1, num_decoder_layers=1, norm_type="plain"
    )
    norms = [m for m in model.modules() if isinstance(m, PlainNorm)]
    assert len(norms) == 2 + 3 and all(norm.d_model == 16 for norm in norms)


def test_an_options_settings_reach_it_in_both_stacks_and_its_stack_decides_what_it_does(probe):
    model = Seq2SeqTransformer(**SMALL, pos_encoding=probe, options={probe: {"scale": 2.5}})
    assert model.src_pos.settings == model.tgt_pos.settings == ProbeSettings(scale=2.5)
    positions = torch.arange(3)
    assert model.src_pos.bias(positions, positions).abs().sum() == 0  # the encoder: no bias
    assert model.tgt_pos.bias(positions, positions)[0].tolist() == [
        [0.0, 0.0, 0.0],
        [2.5, 0.0, 0.0],
        [0.0, 2.5, 0.0],
    ]


def test_an_option_in_use_left_out_of_options_is_saved_with_its_defaults(probe):
    config = TransformerConfig(**SMALL, decoder=StackConfig(pos_encoding=probe))
    assert config.options == {probe: ProbeSettings(scale=1.0)}
    assert config.to_dict()["options"] == {probe: {"scale": 1.0}}


def test_the_saved_dict_with_an_options_settings_rebuilds_the_model(probe):
    model = Seq2SeqTransformer(**SMALL, pos_encoding=probe, options={probe: {"scale": 0.5}})
    saved = io.BytesIO()
    torch.save(model.config.to_dict(), saved)  # primitives only: a weights_only load takes it
    saved.seek(0)
    rebuilt = TransformerConfig.from_dict(torch.load(saved, weights_only=True))
    assert rebuilt == model.config and rebuilt.options[probe].scale == 0.5
    assert TransformerConfig.from_keywords(**model.config.keywords()) == model.config


def test_an_unknown_setting_of_an_option_is_refused_naming_the_settings_it_has(probe):
    with pytest.raises(
        InvalidSetting,
        match=re.escape(
            "options.probe.scael=0.5: ProbeSettings takes no such setting; allowed: scale"
        ),
    ):
        TransformerConfig(**SMALL, pos_encoding=probe, options={probe: {"scael": 0.5}})


def test_settings_for_an_option_that_takes_none_are_refused_naming_those_that_do(probe):
    refused = r"options\.relu=.*: no option of that name takes settings; allowed: .*probe"
    with pytest.raises(InvalidSetting, match=refused):
        TransformerConfig(**SMALL, options={"relu": {"scale": 1.0}})
    with pytest.raises(InvalidSetting, match=r"options=\[1\]: not a node"):
        TransformerConfig(**SMALL, options=[1])


def test_option_names_are_distinct_across_the_axes_so_that_options_name_one_option():
    names = [name for registry in AXES.values() for name in registry]
    assert len(names) == len(set(names)), names
