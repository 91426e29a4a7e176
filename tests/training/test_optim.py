"""The optimisation settings: a typed config apart from the network's, each field with its
help, and the LightningModule's settings the two configs as two nodes (and compile)."""

import dataclasses
import re

import pytest

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.model.config import TransformerConfig
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


def test_the_module_saves_the_network_and_the_optimisation_as_two_nodes(lab_module):
    """The checkpoint's tree: the ``model`` node rebuilds the network's config, the
    ``optim`` node the optimisation's; no key in both."""
    module = lab_module(src_vocab_size=9, tgt_vocab_size=9, lr=2e-3, schedule="noam", ffn="gelu")
    assert set(module.hparams) == {"model", "optim", "compile"}
    assert TransformerConfig.from_dict(module.hparams["model"]) == module.model.config
    assert OptimConfig(**module.hparams["optim"]) == module.optim
    assert not set(module.hparams["model"]) & set(module.hparams["optim"])


def test_a_module_keeps_its_optimisation_apart_from_its_network(lab_module):
    module = lab_module(src_vocab_size=9, tgt_vocab_size=9, lr=2e-3, schedule="noam", ffn="gelu")
    assert module.optim.lr == 2e-3 and module.optim.schedule == "noam"
    assert module.model.config.ffn == "gelu"
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
