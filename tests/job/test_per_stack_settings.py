"""The per-stack settings through the config: null by default (the shared choice), a
stack's own choice reaching its stack, an unknown one refused by its key before any run."""

import pytest
from hydra.core.hydra_config import HydraConfig
from torch import nn

from transformer_lab.config.validation import ConfigError
from transformer_lab.job.build import build_data_and_model
from transformer_lab.job.checks import check_config
from transformer_lab.model.positional import POSITIONAL_ENCODINGS, ALiBi, Rotary, Sinusoidal
from transformer_lab.model.residual import NORM_PLACEMENTS

PER_STACK = ("encoder_norm", "decoder_norm", "encoder_pos_encoding", "decoder_pos_encoding")


def test_by_default_both_stacks_take_the_shared_choice(compose_train):
    cfg = compose_train(["experiment=smoke", "model/norm=pre", "model/pos_encoding=rotary"])
    assert [cfg.model[key] for key in PER_STACK] == [None] * 4
    _, module = build_data_and_model(cfg)
    model = module.model
    assert isinstance(model.encoder_norm, nn.LayerNorm)  # pre: a final norm in each stack
    assert isinstance(model.decoder_norm, nn.LayerNorm)
    assert (type(model.src_pos), type(model.tgt_pos)) == (Rotary, Rotary)


def test_a_stacks_own_choice_reaches_that_stack(compose_train):
    cfg = compose_train(
        [
            "experiment=smoke",
            "model.encoder_norm=post",
            "model.decoder_norm=pre",
            "model.encoder_pos_encoding=alibi",
        ]
    )
    check_config(cfg, HydraConfig.get())
    _, module = build_data_and_model(cfg)
    model = module.model
    assert isinstance(model.encoder_norm, nn.Identity)  # post: no final norm
    assert isinstance(model.decoder_norm, nn.LayerNorm)
    assert (type(model.src_pos), type(model.tgt_pos)) == (ALiBi, Sinusoidal)
    assert module.hparams.encoder_norm == "post" and module.hparams.decoder_pos_encoding is None


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "model.encoder_norm=peri",
            f"model.encoder_norm='peri': unknown; allowed: {', '.join(NORM_PLACEMENTS)}",
        ),
        (
            "model.decoder_norm=1",
            f"model.decoder_norm=1: unknown; allowed: {', '.join(NORM_PLACEMENTS)}",
        ),
        (
            "model.encoder_pos_encoding=relative",
            "model.encoder_pos_encoding='relative': unknown; "
            f"allowed: {', '.join(POSITIONAL_ENCODINGS)}",
        ),
        (
            "model.decoder_pos_encoding=ALiBi",
            "model.decoder_pos_encoding='ALiBi': unknown; "
            f"allowed: {', '.join(POSITIONAL_ENCODINGS)}",
        ),
    ],
)
def test_an_unknown_per_stack_choice_is_refused_by_its_key(compose_train, override, message):
    cfg = compose_train(["experiment=smoke", override])
    with pytest.raises(ConfigError) as error:
        check_config(cfg, HydraConfig.get())
    assert str(error.value) == message
