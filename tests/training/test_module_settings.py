"""One place for each of the lab's defaults: ``conf/model/transformer.yaml`` (with its
groups) sets every setting of the LightningModule, whose constructor has no defaults that
could disagree with it (the network keeps the paper's, for its use alone)."""

import inspect
import re

import pytest

from transformer_lab.config.validation import ConfigError
from transformer_lab.job.build import build_data_and_model
from transformer_lab.model import Seq2SeqTransformer
from transformer_lab.training.module import Seq2SeqLitModule


def test_the_module_takes_each_setting_from_the_config_and_has_no_default_of_its_own(
    compose_train,
):
    parameters = inspect.signature(Seq2SeqLitModule).parameters
    assert [n for n, p in parameters.items() if p.default is not p.empty] == []
    composed = set(compose_train().model) - {"_target_"}
    assert composed == set(parameters)


def test_the_network_alone_keeps_the_papers_defaults():
    defaults = {
        name: p.default
        for name, p in inspect.signature(Seq2SeqTransformer).parameters.items()
        if p.default is not p.empty
    }
    paper = dict(d_model=512, num_heads=8, num_encoder_layers=6, num_decoder_layers=6)
    assert defaults | paper == defaults and defaults["d_ff"] == 2048
    assert defaults["dropout"] == 0.1 and defaults["norm"] == "post"


def test_a_setting_the_config_lacks_is_one_clear_error_not_a_default(compose_train):
    message = (
        "model.dropout=None: missing (Seq2SeqLitModule has no default for it); "
        "allowed: a value in the config"
    )
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        build_data_and_model(compose_train(["experiment=smoke", "~model.dropout"]))
