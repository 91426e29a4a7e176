"""The per-stack settings through the config: null by default (the shared choice), a
stack's own choice reaching its stack, an unknown one refused by its key before any run."""

import pytest
from hydra.core.hydra_config import HydraConfig
from torch import nn

from transformer_lab.config.validation import ConfigError
from transformer_lab.job.build import build_data_and_model
from transformer_lab.job.checks import check_config
from transformer_lab.model.config import PER_STACK, STACKS
from transformer_lab.model.positional import POSITIONAL_ENCODINGS, ALiBi, Rotary, Sinusoidal
from transformer_lab.model.residual import NORM_PLACEMENTS


def test_by_default_both_stacks_take_the_shared_choice(compose_train):
    cfg = compose_train(["experiment=smoke", "model/norm=pre", "model/pos_encoding=rotary"])
    assert [cfg.model[stack][key] for stack in STACKS for key in PER_STACK] == [None] * 4
    _, module = build_data_and_model(cfg)
    model = module.model
    assert isinstance(model.encoder_norm, nn.LayerNorm)  # pre: a final norm in each stack
    assert isinstance(model.decoder_norm, nn.LayerNorm)
    assert (type(model.src_pos), type(model.tgt_pos)) == (Rotary, Rotary)


def test_a_stacks_own_choice_reaches_that_stack(compose_train):
    cfg = compose_train(
        [
            "experiment=smoke",
            "model.encoder.norm=post",
            "model.decoder.norm=pre",
            "model.encoder.pos_encoding=alibi",
        ]
    )
    check_config(cfg, HydraConfig.get())
    _, module = build_data_and_model(cfg)
    model = module.model
    assert isinstance(model.encoder_norm, nn.Identity)  # post: no final norm
    assert isinstance(model.decoder_norm, nn.LayerNorm)
    assert (type(model.src_pos), type(model.tgt_pos)) == (ALiBi, Sinusoidal)
    config = module.model.config
    assert config.encoder.norm == "post" and config.decoder.pos_encoding is None


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "model.encoder.norm=peri",
            f"model.encoder.norm='peri': unknown; allowed: {', '.join(NORM_PLACEMENTS)}",
        ),
        (
            "model.decoder.norm=1",
            f"model.decoder.norm=1: unknown; allowed: {', '.join(NORM_PLACEMENTS)}",
        ),
        (
            "model.encoder.pos_encoding=relative",
            "model.encoder.pos_encoding='relative': unknown; "
            f"allowed: {', '.join(POSITIONAL_ENCODINGS)}",
        ),
        (
            "model.decoder.pos_encoding=ALiBi",
            "model.decoder.pos_encoding='ALiBi': unknown; "
            f"allowed: {', '.join(POSITIONAL_ENCODINGS)}",
        ),
    ],
)
def test_an_unknown_per_stack_choice_is_refused_by_its_key(compose_train, override, message):
    cfg = compose_train(["experiment=smoke", override])
    with pytest.raises(ConfigError) as error:
        check_config(cfg, HydraConfig.get())
    assert str(error.value) == message
