"""The optimisation settings: a typed config apart from the network's, each field with its
help, and the LightningModule's settings exactly the two configs' (plus ffn and compile)."""

import dataclasses
import inspect
import re

import pytest

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.model.config import TransformerConfig
from transformer_lab.training.module import Seq2SeqLitModule
from transformer_lab.training.optim import OptimConfig

VALID = dict(
    lr=1e-3,
    betas=[0.9, 0.98],
    weight_decay=0.01,
    schedule="cosine",
    warmup_steps=400,
    min_lr_ratio=0.1,
    label_smoothing=0.0,
)


def test_every_field_has_a_one_line_help():
    for field in dataclasses.fields(OptimConfig):
        text = field.metadata.get("help", "")
        assert text and "\n" not in text, field.name


def test_the_modules_settings_are_the_network_config_and_the_optimisation_config():
    network = set(TransformerConfig.keyword_names()) - {"activation"}  # model.ffn in the config
    optim = {field.name for field in dataclasses.fields(OptimConfig)}
    assert not network & optim
    module = set(inspect.signature(Seq2SeqLitModule).parameters)
    assert module == network | optim | {"ffn", "compile"}


def test_a_module_keeps_its_optimisation_apart_from_its_network(lab_module):
    module = lab_module(src_vocab_size=9, tgt_vocab_size=9, lr=2e-3, schedule="noam", ffn="gelu")
    assert module.optim.lr == 2e-3 and module.optim.schedule == "noam"
    assert module.model.config.activation == "gelu"
    assert not hasattr(module.model.config, "lr")


@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        ("lr", 0, "lr=0: out of range; allowed: a number > 0"),
        ("betas", 0.9, "betas=0.9: not a pair; allowed: [beta1, beta2], each in [0, 1)"),
        ("betas", [0.9, 1.0], "betas[1]=1.0: out of range; allowed: a number in [0, 1)"),
        ("schedule", "step", "schedule='step': unknown; allowed: "),
        ("min_lr_ratio", 2, "min_lr_ratio=2: out of range; allowed: a number in [0, 1]"),
    ],
)
def test_a_setting_that_cannot_work_is_refused_by_its_name(setting, value, message):
    with pytest.raises(InvalidSetting, match=re.escape(message)):
        OptimConfig(**{**VALID, setting: value})
