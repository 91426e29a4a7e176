"""The HPARAMS entry's hyper-parameters: the job's overrides first, one spelling per key,
then the curated set; never plumbing."""

import re

import pytest

from transformer_lab.hparams import CURATED, override_key, run_hparams
from transformer_lab.train import ConfigError, train


@pytest.mark.parametrize("typed", ["model/norm", "model.norm", "+model.norm", "~model.norm"])
def test_a_group_slash_and_a_value_dot_are_one_key(typed):
    assert override_key(typed) == "model.norm"


def test_overrides_come_first_with_their_resolved_values_and_plumbing_is_left_out(compose_train):
    overrides = ["seed=3", "model/norm=pre", "data=copy", "paths.outputs_root=/tmp/x",
                 "callbacks.layer_stats.every_n_steps=3", "~callbacks.attention_maps"]  # fmt: skip
    params, overridden = run_hparams(compose_train(overrides), overrides)
    assert overridden == {"seed", "model.norm", "data"}
    assert list(params)[:3] == ["seed", "model.norm", "data"]
    assert params["seed"] == 3 and params["model.norm"] == "pre"
    assert params["data"] == "copy"  # a whole group: the option as typed
    assert params["data.task"] == "copy"
    assert list(params)[3:] == [k for k in CURATED if k != "model.norm"]
    assert not [k for k in params if k.startswith(("callbacks", "paths"))]


@pytest.mark.parametrize("target", [0, 1.5])
def test_a_target_accuracy_outside_0_to_1_is_a_config_error(compose_train, target):
    message = f"target_seq_acc={target}: out of range; allowed: a number in (0, 1]"
    with pytest.raises(ConfigError, match=re.escape(message)):
        train(compose_train(["experiment=smoke", f"target_seq_acc={target}"]))
