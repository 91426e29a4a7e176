"""What Hydra would refuse in its own words, and what Lightning or torch would refuse after the
run folder, through the command line: one ``error:`` line naming what was typed and what
exists (the nearest first), exit status 2, no folder; Hydra's full trace with
``HYDRA_FULL_ERROR=1``. Nothing here trains: each start is refused before it could."""

from pathlib import Path

import pytest
import torch

from transformer_lab.model.residual import NORM_PLACEMENTS

from ..command_line import run_train_here

FIXTURE = Path(__file__).parents[1] / "fixtures" / "checkpoint_before_stage_folders.ckpt"
# tiny and short, in case a start were not refused (no experiment=smoke: it sets trainer=cpu)
TINY = ["data.train_size=64", "data.val_size=16", "data.test_size=16", "trainer.max_steps=2"]

# each its own start: (arguments, how the one line begins)
TYPOS = {
    "group option": (
        ["data=pair"],
        "error: data='pair': no such option of config group data; allowed: pairs, ",
    ),
    "nested group option": (
        ["model/norm=middle"],
        "error: model/norm='middle': no such option of config group model/norm; allowed: "
        + ", ".join(sorted(NORM_PLACEMENTS)),
    ),
    "group": (
        ["modle/norm=pre"],
        "error: modle/norm='pre': no such config group; allowed: model/norm, ",
    ),
    "key": (
        ["trainer.max_step=10"],
        "error: trainer.max_step=10: no such setting; allowed: trainer.max_steps, ",
    ),
    "own group option": (  # an experiment of one's own, found on hydra.searchpath
        ["hydra.searchpath=[file://{own}]", "experiment=mien"],
        "error: experiment='mien': no such option of config group experiment; allowed: mine, ",
    ),
    "swept group option": (  # the second value: before the sweep makes its folder
        ["-m", "data=reverse,pair"],
        "error: data='pair': no such option of config group data; allowed: pairs, ",
    ),
    "swept key": (
        ["-m", "trainer.max_step=1,2"],
        "error: trainer.max_step=1: no such setting; allowed: trainer.max_steps, ",
    ),
}


def refused(tmp_path, *arguments, env=None):
    """The start of ``arguments`` in the test process; asserts it was refused in one line
    with exit status 2 and made no folder; that line."""
    outputs_root = tmp_path / "outputs"
    result = run_train_here(outputs_root, *arguments, *TINY, env=env)  # -m first
    assert result.returncode == 2, result.stderr[-2000:]
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert "HYDRA_FULL_ERROR" not in result.stderr
    assert not outputs_root.exists()
    return lines[0]


@pytest.mark.parametrize("case", TYPOS)
def test_a_typo_is_one_line_with_the_nearest_names_first(tmp_path, case):
    arguments, beginning = TYPOS[case]
    (tmp_path / "own" / "experiment").mkdir(parents=True)
    (tmp_path / "own" / "experiment" / "mine.yaml").write_text("# @package _global_\n")
    arguments = [a.format(own=tmp_path / "own") for a in arguments]
    assert refused(tmp_path, *arguments).startswith(beginning)


def test_hydra_full_error_gives_hydras_own_trace(tmp_path):
    result = run_train_here(tmp_path / "outputs", "data=pair", env={"HYDRA_FULL_ERROR": "1"})
    assert result.returncode == 1
    assert "Could not find 'data/pair'" in result.stderr
    assert "Traceback" in result.stderr


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_an_accelerator_the_machine_lacks_is_refused_before_the_run(tmp_path):
    assert refused(tmp_path, "trainer=gpu") == (
        "error: trainer.accelerator='gpu': this machine has no such device; allowed: auto, cpu "
        "(trainer=cpu)"
    )


def test_a_garbage_checkpoint_is_one_line_naming_it(tmp_path):
    garbage = tmp_path / "garbage.ckpt"
    garbage.write_bytes(b"not a checkpoint\n")
    assert refused(tmp_path, f"ckpt_path={garbage}") == (
        f"error: ckpt_path='{garbage}': not a checkpoint of this lab (torch refuses to unpickle "
        "it: WeightsUnpickler error: Unsupported operand 110); allowed: a checkpoint a run of "
        "the lab wrote, 'last', or null"
    )


def test_a_sweep_whose_jobs_would_share_a_folder_is_refused_at_its_start(tmp_path):
    line = refused(tmp_path, "-m", "experiment=smoke", f"ckpt_path=null,{FIXTURE}")
    assert line == (
        f"error: ckpt_path: the sweep's jobs ckpt_path=null and ckpt_path={FIXTURE} would run "
        "in one folder, defaults (run folders are not named by ckpt_path); allowed: "
        "one run per value of ckpt_path, or a sweep over other keys"
    )


def test_hydra_full_error_shows_the_trace_of_the_labs_own_refusal_too(tmp_path):
    garbage = tmp_path / "garbage.ckpt"
    garbage.write_bytes(b"not a checkpoint\n")
    result = run_train_here(
        tmp_path / "outputs", f"ckpt_path={garbage}", *TINY, env={"HYDRA_FULL_ERROR": "1"}
    )
    assert result.returncode == 2
    assert "Traceback" in result.stderr and "UnpicklingError" in result.stderr  # torch's cause
    assert result.stderr.strip().splitlines()[-1].startswith(f"error: ckpt_path='{garbage}'")
