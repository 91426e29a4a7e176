"""Hydra's records of a job are written whole or not at all: the contract with Hydra's
private ``_save_config`` (its name, its arguments, run_job calling it), and the atomic
write in its place, which ends the command in one line where the write fails."""

import inspect

import hydra.core.utils
import pytest
from omegaconf import OmegaConf

from transformer_lab.config import hydra_saves


def test_run_job_saves_the_job_records_through_the_function_the_lab_replaces():
    parameters = list(inspect.signature(hydra.core.utils._save_config).parameters)
    assert parameters == ["cfg", "filename", "output_dir"]
    run_job = inspect.getsource(hydra.core.utils.run_job)
    assert run_job.count("_save_config(") == 3  # config.yaml, hydra.yaml, overrides.yaml


def test_the_train_command_installs_the_atomic_save():
    import transformer_lab.train  # noqa: F401 (installs it at import)

    assert hydra.core.utils._save_config is hydra_saves.save_config


def test_a_saved_config_reads_back_as_hydra_writes_it(tmp_path):
    config = OmegaConf.create({"model": {"d_model": 32}, "note": "ünïcode"})
    hydra_saves.save_config(config, "config.yaml", tmp_path / ".hydra")
    assert OmegaConf.load(tmp_path / ".hydra" / "config.yaml") == config
    assert [p.name for p in (tmp_path / ".hydra").iterdir()] == ["config.yaml"]  # no temporary


def test_a_config_that_cannot_be_written_is_one_line_and_exit_1_leaving_no_file(tmp_path, capsys):
    blocked = tmp_path / "a_file"
    blocked.write_text("not a folder")
    with pytest.raises(SystemExit) as exited:
        hydra_saves.save_config(OmegaConf.create({"a": 1}), "config.yaml", blocked / ".hydra")
    assert exited.value.code == 1
    error = capsys.readouterr().err
    assert error.startswith(f"error: {blocked / '.hydra' / 'config.yaml'}: could not write Hydra's")
    assert error.count("\n") == 1
    assert blocked.read_text() == "not a folder"
