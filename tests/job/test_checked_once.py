"""A run from the command line is composed once (by Hydra) and checked once (before Hydra
makes its folder, the job taking that check's result, its datamodule among it); a sweep's
job is checked again when it starts, and a programmatic run checks itself."""

import os

import pytest
from hydra.core.hydra_config import HydraConfig

from transformer_lab.config import command_line
from transformer_lab.job import build, checks, run

from ..command_line import run_train_here


class Counted:
    """A function that counts its calls and otherwise does what it did."""

    def __init__(self, function):
        self.function, self.calls = function, 0

    def __call__(self, *arguments, **keywords):
        self.calls += 1
        return self.function(*arguments, **keywords)


class Resumed(Exception):
    """Where the job would go on to resume or build: far enough for this test."""


def stop_before_the_build(cfg, context, named):
    raise Resumed(f"checkpoint: {named}")


def test_a_run_from_the_command_line_is_composed_once_and_checked_once(tmp_path, monkeypatch):
    check_config = Counted(checks.check_config)
    check_overrides = Counted(command_line.check_overrides)
    monkeypatch.setattr(checks, "check_config", check_config)
    monkeypatch.setattr(command_line, "check_overrides", check_overrides)
    monkeypatch.setattr(run, "resume_point", stop_before_the_build)
    result = run_train_here(tmp_path / "outputs", "experiment=smoke")
    assert "Resumed: checkpoint: None" in result.stderr, result.stderr[-2000:]
    assert check_config.calls == 1  # ConfigCheck's, before the folder; the job took its result
    assert check_overrides.calls == 0  # Hydra composed it; no composing of the lab's own


def test_a_job_not_checked_before_its_folder_checks_itself(compose_train, monkeypatch):
    """A sweep's job (checked at the sweep's start, maybe hours before) or a programmatic
    run: each check is its own, none left over for the next."""
    check_config = Counted(checks.check_config)
    monkeypatch.setattr(checks, "check_config", check_config)
    cfg = compose_train(["experiment=smoke"])
    checks.check_run(cfg, HydraConfig.get())
    assert checks.checked_config(cfg, HydraConfig.get()).checkpoint is None
    assert check_config.calls == 1
    assert checks.checked_config(cfg, HydraConfig.get()).checkpoint is None  # checked anew
    assert check_config.calls == 2


def test_a_run_builds_its_data_once_for_its_check_and_its_training(tmp_path, monkeypatch):
    """The check's datamodule holds no tensors, so the meta device it was built on leaves
    it as the training needs it: the job builds only its model again, with weights."""
    built, instantiate = [], build.instantiate

    def counted(key, node, **keywords):
        built.append(key)
        return instantiate(key, node, **keywords)

    monkeypatch.setattr(build, "instantiate", counted)
    result = run_train_here(tmp_path / "outputs", "experiment=smoke")
    assert result.returncode == 0, result.stderr[-2000:]
    assert built.count("data") == 1


def test_a_failed_composition_of_a_single_run_is_the_labs_one_line(tmp_path):
    result = run_train_here(tmp_path / "outputs", "model.d_modle=3")
    assert result.returncode == 2
    assert result.stderr.startswith("error: model.d_modle=3: no such setting; allowed: model.d_")
    assert result.stderr.count("\n") == 1 and not (tmp_path / "outputs").exists()


@pytest.mark.parametrize("arguments", [["-m", "seed=0,1"], ["--cfg", "job"]])
def test_a_sweep_or_a_hydra_option_leaves_hydras_errors_to_hydra(arguments, monkeypatch):
    """``composed_once`` sets no switch where it does not compose alone."""
    monkeypatch.delenv(command_line.FULL_ERROR, raising=False)
    monkeypatch.setattr(command_line, "check_command_line", lambda *a: None)
    with command_line.composed_once(arguments):
        assert command_line.FULL_ERROR not in os.environ
