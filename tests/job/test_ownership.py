"""What belongs to a run (job/ownership.py): a fresh run writes only into a new or empty
folder or one of an earlier start of its own config; a resumed checkpoint must be of this
config's model and data, but for how the batches are loaded."""

from pathlib import Path

import pytest
import torch
from omegaconf import OmegaConf

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.job.build import build_data_and_model
from transformer_lab.job.ownership import check_checkpoint, check_folder

from ..conftest import compose_run

SMOKE = ["experiment=smoke"]


@pytest.fixture
def config(tmp_path):
    return compose_run(tmp_path / "compose", SMOKE)


def test_the_root_of_the_file_system_is_no_run_folder(config):
    with pytest.raises(InvalidSetting, match=r"^hydra.run.dir='/': it holds files that are not"):
        check_folder(Path("/"), config, "hydra.run.dir")


def test_a_new_an_empty_and_a_cut_short_start_folder_may_be_written_into(tmp_path, config):
    check_folder(tmp_path / "new", config, "hydra.run.dir")
    (tmp_path / "empty").mkdir()
    check_folder(tmp_path / "empty", config, "hydra.run.dir")
    cut = tmp_path / "cut"  # a start that a full disk stopped before it wrote anything
    (cut / ".hydra").mkdir(parents=True)
    (cut / ".hydra" / "config.yaml").write_text("")
    (cut / "train.log").write_text("")
    (cut / ".run.lock").write_text("")
    check_folder(cut, config, "hydra.run.dir")


def test_a_run_folder_is_its_own_configs_whatever_its_ckpt_path_and_paths(tmp_path, config):
    run = tmp_path / "run"
    (run / ".hydra").mkdir(parents=True)
    (run / "metrics.json").write_text("{}")
    earlier = config.copy()
    earlier.ckpt_path = "/somewhere/last.ckpt"
    earlier.paths.outputs_root = "/another/machine/outputs"  # a sweep kept and continued here
    OmegaConf.save(earlier, run / ".hydra" / "config.yaml")
    check_folder(run, config, "hydra.run.dir")
    config.model.d_model = 64
    refused = r"another config: model.d_model: 32 there, 64 here; allowed: "
    with pytest.raises(InvalidSetting, match=refused):
        check_folder(run, config, "hydra.run.dir")


def test_a_checkpoint_may_load_its_batches_otherwise_but_not_be_of_another_task(config):
    with torch.device("meta"):
        datamodule, module = build_data_and_model(config)
    checkpoint = {
        "hyper_parameters": dict(module.hparams),
        "datamodule_hyper_parameters": {**datamodule.hparams, "batch_size": 8},
    }
    check_checkpoint(checkpoint, module, datamodule, "ckpt_path", "x.ckpt")
    checkpoint["datamodule_hyper_parameters"]["task"] = "copy"
    with pytest.raises(InvalidSetting) as refused:
        check_checkpoint(checkpoint, module, datamodule, "ckpt_path", "x.ckpt")
    assert str(refused.value) == (
        "ckpt_path='x.ckpt': a checkpoint of another model or task: data.task: 'copy' there, "
        "'reverse' here; allowed: a checkpoint of a run of this model and data, or a start "
        "without it"
    )
