"""Every ``conf/data/*.yaml`` composes with the main job's defaults and with
``experiment=smoke``, builds, and serves a batch; its settings are the ones its datamodule
takes, at the defaults the Python code writes (one set of defaults)."""

import inspect
from dataclasses import asdict
from pathlib import Path

import hydra
import pytest
from omegaconf import OmegaConf

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.data.split_settings import SplitSettings
from transformer_lab.job.build import build_data_and_model

from ..real_corpora import HAVE_MULTI30K, MULTI30K, NO_MULTI30K

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"
DATA_OPTIONS = sorted(p.stem for p in (CONF_DIR / "data").glob("*.yaml"))


def pairs_file(tmp_path: Path) -> list[str]:
    """``data=pairs`` reads its pairs from a file: 2,000 short ones, room for the held-out
    500 + 500 of its defaults."""
    path = tmp_path / "pairs.tsv"
    path.write_text("".join(f"a {i} b\tb {i} a\n" for i in range(2000)))
    return [f"data.train_path={path}", "data.tokenizer=word"]


def data_files(tmp_path: Path, option: str) -> list[str]:
    """The overrides that give ``option`` the files it reads: none for a drawn task."""
    if option == "pairs":
        return pairs_file(tmp_path)
    if option == "multi30k":
        if not HAVE_MULTI30K:
            pytest.skip(NO_MULTI30K)
        return [f"data.data_dir={MULTI30K}"]
    return []


@pytest.mark.slow  # the main job's 100,000 examples, drawn for each task
@pytest.mark.parametrize("experiment", [[], ["experiment=smoke"]], ids=["main_job", "smoke"])
@pytest.mark.parametrize("option", DATA_OPTIONS)
def test_every_data_option_builds_and_serves_a_batch(compose_train, tmp_path, option, experiment):
    files = data_files(tmp_path, option)
    cfg = compose_train([*experiment, f"data={option}", *files])
    datamodule, module = build_data_and_model(cfg)
    batch = next(iter(datamodule.train_dataloader()))
    assert len(batch["src"]) == cfg.data.batch_size == (32 if experiment else 64)
    assert batch["tgt_in"].shape == batch["tgt_out"].shape
    assert module.model.config.max_len >= datamodule.max_seq_len >= batch["src"].shape[1]
    if experiment:  # smoke's sizes, which SCAN and pairs take as "at most" too
        assert (len(datamodule.splits["train"]), len(datamodule.splits["test"])) == (512, 64)


@pytest.mark.parametrize("option", DATA_OPTIONS)
def test_every_data_options_positions_cover_its_widest_split(compose_train, tmp_path, option):
    """``max_seq_len``, which the job holds ``model.max_len`` to, is at least the width of
    every ``src``, ``tgt_in`` and ``tgt_out`` of every split, test_long included (the
    synthetic tasks' is exactly theirs: tests/data/test_tasks.py)."""
    cfg = compose_train(["experiment=smoke", f"data={option}", *data_files(tmp_path, option)])
    datamodule, _ = build_data_and_model(cfg)
    widest = max(
        getattr(split, key).shape[1]
        for split in datamodule.splits.values()
        for key in ("src", "tgt_in", "tgt_out")
    )
    assert datamodule.max_seq_len >= widest


def test_the_shared_split_yaml_is_the_split_settings_node_with_its_defaults():
    shared = OmegaConf.to_container(OmegaConf.load(CONF_DIR / "data" / "shared" / "splits.yaml"))
    assert shared == asdict(SplitSettings()) | {"seed": "${seed}"}  # the run's seed


def python_defaults(cls) -> dict:
    """What ``cls()`` takes when a setting is not given: its constructor's defaults, and
    the split settings' (the shared ones, or its own ``split_defaults``)."""
    own = {
        name: p.default
        for name, p in inspect.signature(cls).parameters.items()
        if p.default is not p.empty
    }
    return own | asdict(SplitSettings()) | cls.split_defaults


@pytest.mark.parametrize("option", DATA_OPTIONS)
def test_each_data_yaml_sets_what_its_datamodule_takes_at_its_python_defaults(
    compose_train, option
):
    data = OmegaConf.to_container(compose_train([f"data={option}"]).data)
    cls = hydra.utils.get_class(data.pop("_target_"))
    defaults = python_defaults(cls)
    if cls.fits_model_positions:  # given by the job, from model.max_len: no data setting
        assert defaults.pop("model_positions") and "model_positions" not in data
    assert data.pop("seed") == "${seed}" and data.pop("train_path", None) in (None, "???")
    if "data_dir" in data:  # a corpus's folder, under the data root: no Python default
        assert data.pop("data_dir") == f"${{paths.data_root}}/{option}"
    if "task" in data:  # the option's own task: copy and sort are reverse's with theirs
        assert data.pop("task") == option and defaults.pop("task") == "reverse"
    assert data == {key: defaults[key] for key in data}  # every one a default of the class
    assert set(defaults) - {"seed", "train_path", "data_dir"} == set(data)  # each one in the YAML


def test_no_data_setting_is_called_by_the_models_length_name(compose_train):
    """``max_len`` is the model's positions; a data setting says it is a task's length."""
    for option in DATA_OPTIONS:
        data = compose_train([f"data={option}"]).data
        assert not {"min_len", "max_len", "model_max_len"} & set(data), option


def test_a_setting_no_datamodule_takes_is_refused_naming_every_one_it_takes(compose_train):
    cfg = compose_train(["experiment=smoke", "data=scan", "+data.max_task_len=9"])
    with pytest.raises(InvalidSetting) as refused:
        build_data_and_model(cfg)
    assert str(refused.value) == (
        "data.max_task_len=9: ScanDataModule takes no such setting; allowed: split, "
        "train_size, val_size, test_size, batch_size, seed, num_workers"
    )
