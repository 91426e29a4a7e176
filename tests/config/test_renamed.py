"""Settings renamed (config/renamed.py), the data's to say which length they mean: an old
name typed on a command line is one error naming the new one, and a checkpoint's saved old
names map to the new ones through the same table."""

import pytest
from hydra.core.hydra_config import HydraConfig
from omegaconf import OmegaConf

from transformer_lab.config.command_line import check_overrides
from transformer_lab.config.entry_command import EvaluationError, configure
from transformer_lab.config.renamed import (
    RENAMED_DATA_SETTINGS,
    RENAMED_KEYS,
    current_data_settings,
)
from transformer_lab.config.validation import InvalidSetting
from transformer_lab.job.checks import check_config

REASON = "now {} (a task's length is data.*_task_len; model.max_len counts positions)"
NEW = {
    "min_len": "data.min_task_len",
    "max_len": "data.max_task_len",
    "test_long_max_len": "data.test_long_max_task_len",
    "model_max_len": "model.max_len",  # data=pairs: the job passes the model's positions on
}


@pytest.mark.parametrize("old", sorted(RENAMED_DATA_SETTINGS))
def test_an_old_data_setting_given_to_train_names_its_new_name(old):
    new = NEW[old]
    with pytest.raises(InvalidSetting) as refused:
        check_overrides(["experiment=smoke", f"data.{old}=7"], "train")
    assert str(refused.value) == f"data.{old}=7: {REASON.format(new)}; allowed: {new}=<value>"


def test_the_models_max_len_keeps_its_name():
    check_overrides(["model.max_len=32"], "train")  # no error: positions, not renamed


def test_an_old_test_split_setting_given_to_evaluate_names_its_new_name():
    new = "data.test_long_max_task_len"
    with pytest.raises(EvaluationError) as refused:
        configure(["ckpt_path=x", "data.test_long_max_len=30"], "evaluate", ("ckpt_path",))
    assert str(refused.value) == (
        f"data.test_long_max_len=30: {REASON.format(new)}; allowed: {new}=<value>"
    )
    assert configure([f"{new}=30"], "evaluate", ()).data.test_long_max_task_len == 30


def test_saved_old_names_take_the_new_ones_and_the_rest_stay():
    saved = {"task": "copy", "min_len": 3, "max_len": 10, "test_long_max_len": 0, "seed": 1}
    assert current_data_settings(saved) == {
        "task": "copy",
        "min_task_len": 3,
        "max_task_len": 10,
        "test_long_max_task_len": 0,
        "seed": 1,
    }
    assert current_data_settings({"model_max_len": 64}) == {"model_positions": 64}


# one key of each kind the table moves (the rest follow the same rule; every new name is
# checked to exist below)
@pytest.mark.parametrize(
    "old", ["model.activation", "model.compile", "model.lr", "model.decoder_pos_encoding"]
)
def test_an_old_model_setting_given_to_train_names_its_place_in_the_config_tree(old):
    """``model.lr`` is ``optim.lr``, ``model.encoder_norm`` is ``model.encoder.norm``, ..."""
    new = RENAMED_KEYS[old]
    with pytest.raises(InvalidSetting) as refused:
        check_overrides(["experiment=smoke", f"{old}=7"], "train")
    assert str(refused.value) == f"{old}=7: now {new}; allowed: {new}=<value>"


@pytest.mark.parametrize(
    ("added", "message"),
    [
        ("+model.lr=3e-3", "model.lr=0.003: now optim.lr; allowed: optim.lr"),
        ("+data.max_len=5", f"data.max_len=5: {REASON.format('data.max_task_len')}; allowed: "),
    ],
)
def test_an_old_key_in_a_config_file_names_its_new_one(compose_train, added, message):
    """An experiment file, or a run's saved config.yaml, of an older version sets
    ``model.lr`` or ``data.max_len`` (``+`` adds the key as such a file would): the run's
    check names the new key before anything is built."""
    with pytest.raises(InvalidSetting) as refused:
        check_config(compose_train(["experiment=smoke", added]), HydraConfig.get())
    assert str(refused.value).startswith(message)


def test_every_new_name_is_a_key_of_the_config(compose_train):
    """The table points to keys that exist: the main job's, or a drawn task's lengths."""
    main_job, addition = compose_train(), compose_train(["data=addition"])
    for new in RENAMED_KEYS.values():
        parent, _, leaf = new.rpartition(".")
        config = addition if new.startswith("data.") else main_job
        node = OmegaConf.select(config, parent) if parent else config
        assert leaf in node, new
