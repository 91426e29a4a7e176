"""What is not the run's is refused in one line, exit 2, before anything of it is written:
a folder of something else as the run folder (``hydra.run.dir=/etc``), another model's
checkpoint as ``ckpt_path``, a hostile checkpoint on every way a command reads one
(``ckpt_path=``, ``ckpt_path=last``, a requeued job's own ``last.ckpt``, evaluate,
generate), and a run folder another process writes into. No training: each is refused
before its first step, in the test process."""

import os

import pytest
import torch
from filelock import FileLock
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import OmegaConf

from ..command_line import python_module, run_command_here, run_train_here
from ..conftest import CONF_DIR, files_of

SMOKE = ["experiment=smoke", "~callbacks.progress_bar"]


class RunsCode:
    """A pickle that runs ``touch <marker>`` when loaded without ``weights_only``."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


@pytest.fixture
def hostile(tmp_path):
    """``(path, marker)``: a checkpoint, saved as torch saves one, whose loading without
    ``weights_only`` would create ``marker``."""
    marker = tmp_path / "code_ran"
    path = tmp_path / "hostile.ckpt"
    torch.save({"state_dict": RunsCode(marker)}, path)
    return path, marker


def one_line(result, status: int = 2) -> str:
    """The single ``error:`` line of a refused command, with no traceback or advice."""
    said = result.stdout + result.stderr
    assert result.returncode == status, said[-3000:]
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, said[-3000:]
    assert "Traceback" not in said
    assert "weights_only=False" not in said and "weights_only` set to `False" not in said
    return lines[0]


def saved_config(folder, outputs_root, *overrides) -> None:
    """``folder/.hydra/config.yaml`` as a run of ``overrides`` leaves it."""
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("train", overrides=[*overrides, f"paths.outputs_root={outputs_root}"])
    GlobalHydra.instance().clear()
    (folder / ".hydra").mkdir(parents=True)
    OmegaConf.save(cfg, folder / ".hydra" / "config.yaml")


def test_a_folder_of_something_else_is_not_a_run_folder(tmp_path):
    elsewhere = tmp_path / "etc"
    elsewhere.mkdir()
    (elsewhere / "passwd").write_text("root:x:0:0\n")
    line = one_line(run_train_here(tmp_path / "outputs", *SMOKE, f"hydra.run.dir={elsewhere}"))
    assert line == (
        f"error: hydra.run.dir='{elsewhere}': it holds files that are not a run of the lab (no "
        "readable .hydra/config.yaml); allowed: a new or empty folder, or the folder of an "
        "earlier run of this same config"
    )
    assert [p.name for p in elsewhere.iterdir()] == ["passwd"]


def test_a_run_folder_of_another_config_is_not_this_runs(tmp_path):
    folder, outputs = tmp_path / "outputs" / "runs" / "fixed", tmp_path / "outputs"
    saved_config(folder, outputs, *SMOKE, "model.d_model=64")
    before = files_of(folder)
    line = one_line(run_train_here(outputs, *SMOKE, f"hydra.run.dir={folder}"))
    assert line.startswith(f"error: hydra.run.dir='{folder}': the folder of a run of another ")
    assert "model.d_model: 64 there, 32 here" in line
    assert files_of(folder) == before


def test_another_models_checkpoint_is_refused_naming_the_difference(tmp_path, untrained_checkpoint):
    """Kept in another run's folder: that run is left as it was (no config rewritten)."""
    checkpoint, _ = untrained_checkpoint
    other = tmp_path / "other_run"
    (other / ".hydra").mkdir(parents=True)
    (other / "checkpoints").mkdir()
    last = checkpoint.rename(other / "checkpoints" / "last.ckpt")
    before = files_of(other)
    line = one_line(run_train_here(tmp_path / "outputs", *SMOKE, f"ckpt_path={last}"))
    assert line.startswith(f"error: ckpt_path='{last}': a checkpoint of another model or task: ")
    assert ": model.d_ff: 256 there, 64 here (and 9 more); " in line  # the first, and a count
    assert line.endswith(
        "; allowed: a checkpoint of a run of this model and data, or a start without it"
    )
    assert files_of(other) == before
    assert not (tmp_path / "outputs").exists()


def test_a_hostile_checkpoint_found_by_ckpt_path_last_is_one_line_and_never_runs(tmp_path, hostile):
    path, marker = hostile
    outputs = tmp_path / "outputs"
    run = outputs / "runs" / "2020-01-01_00-00-00-000000"
    saved_config(run, outputs, *SMOKE)
    (run / "checkpoints").mkdir()
    path.rename(run / "checkpoints" / "last.ckpt")
    line = one_line(run_train_here(outputs, *SMOKE, "ckpt_path=last"))
    assert line == (
        f"error: ckpt_path='last': {run / 'checkpoints' / 'last.ckpt'}: not a checkpoint of "
        "this lab (torch refuses to unpickle it: Trying to load unsupported GLOBAL "
        "posix.system whose module posix is blocked); allowed: a checkpoint a run of the lab "
        "wrote, 'last', or null"
    )
    assert not marker.exists()
    assert [p.name for p in (outputs / "runs").iterdir()] == [run.name]


def test_a_requeued_jobs_hostile_last_checkpoint_is_one_line_and_never_runs(tmp_path, hostile):
    path, marker = hostile
    folder, outputs = tmp_path / "outputs" / "runs" / "job", tmp_path / "outputs"
    saved_config(folder, outputs, *SMOKE)
    (folder / "checkpoints").mkdir()
    path.rename(folder / "checkpoints" / "last.ckpt")
    line = one_line(run_train_here(outputs, *SMOKE, f"hydra.run.dir={folder}"))
    assert line.startswith(
        f"error: hydra.run.dir='{folder}': {folder / 'checkpoints' / 'last.ckpt'}: not a "
        "checkpoint of this lab (torch refuses to unpickle it: "
    )
    assert not marker.exists()
    assert not (folder / "config_resolved.yaml").exists()


@pytest.mark.parametrize("module", ["transformer_lab.evaluate", "transformer_lab.generate"])
def test_evaluate_and_generate_refuse_a_hostile_checkpoint_in_one_line(tmp_path, hostile, module):
    path, marker = hostile
    result = run_command_here(python_module(module, f"ckpt_path={path}"), tmp_path, input="1 2\n")
    assert one_line(result) == (
        f"error: {path} is not a checkpoint of this lab (torch refuses to unpickle it: Trying "
        "to load unsupported GLOBAL posix.system whose module posix is blocked)"
    )
    assert not marker.exists()


def test_a_run_folder_another_process_writes_into_is_refused(tmp_path):
    folder = tmp_path / "outputs" / "runs" / "job"
    folder.mkdir(parents=True)
    with FileLock(folder / ".run.lock"):  # as a training process holds it
        result = run_train_here(tmp_path / "outputs", *SMOKE, f"hydra.run.dir={folder}")
    assert one_line(result) == (
        f"error: {folder} is in use by another process (a run, a resume or a sweep's job "
        "writing into it holds .run.lock); allowed: wait until it ends, or stop it"
    )
    assert not (folder / "config_resolved.yaml").exists()
