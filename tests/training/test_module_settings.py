"""One place for each of the lab's values: ``conf/`` sets every setting of the
LightningModule (the ``model`` node for the network, ``optim`` for its optimisation), whose
constructor has no defaults that could disagree with it (the network keeps the paper's,
for its use alone), and a run whose config lacks one is refused."""

import dataclasses
import inspect
import re

import pytest

from transformer_lab.config.validation import ConfigError
from transformer_lab.job.build import build_data_and_model
from transformer_lab.model import Seq2SeqTransformer
from transformer_lab.model.config import TransformerConfig
from transformer_lab.training.module import Seq2SeqLitModule
from transformer_lab.training.optim import OptimConfig


def test_the_module_takes_each_setting_from_the_config_and_has_no_default_of_its_own(
    compose_train,
):
    parameters = inspect.signature(Seq2SeqLitModule).parameters
    assert [n for n, p in parameters.items() if p.default is not p.empty] == []
    assert list(parameters) == ["model", "optim", "compile"]
    cfg = compose_train()
    assert set(cfg.model) == {f.name for f in dataclasses.fields(TransformerConfig)}
    assert set(cfg.optim) == {f.name for f in dataclasses.fields(OptimConfig)}
    assert set(cfg.model.encoder) == set(cfg.model.decoder) == {"norm", "pos_encoding"}


def test_the_network_alone_keeps_the_papers_defaults():
    defaults = {
        name: p.default
        for name, p in inspect.signature(Seq2SeqTransformer).parameters.items()
        if p.default is not p.empty
    }
    paper = dict(d_model=512, num_heads=8, num_encoder_layers=6, num_decoder_layers=6)
    assert defaults | paper == defaults and defaults["d_ff"] == 2048
    assert defaults["dropout"] == 0.1 and defaults["norm"] == "post"


@pytest.mark.parametrize("key", ["model.dropout", "optim.lr", "optim.min_lr_ratio"])
def test_a_setting_the_config_lacks_is_one_clear_error_not_a_default(compose_train, key):
    """Even one the class has a default for (the network's paper values, cosine's floor)."""
    message = (
        f"{key}=None: missing (every run sets it; the class's own default is not the "
        "lab's); allowed: a value in the config"
    )
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        build_data_and_model(compose_train(["experiment=smoke", f"~{key}"]))


def test_a_setting_no_config_has_is_refused_with_the_allowed_ones(compose_train):
    with pytest.raises(ConfigError, match=r"^model\.encoder\.qk=1: StackConfig takes no such "):
        build_data_and_model(compose_train(["experiment=smoke", "+model.encoder.qk=1"]))
    with pytest.raises(ConfigError, match=r"^optim\.momentum=0\.9: OptimConfig takes no such "):
        build_data_and_model(compose_train(["experiment=smoke", "+optim.momentum=0.9"]))
