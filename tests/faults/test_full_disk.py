"""A disk that fills up during a run: one line naming the file and what it holds, exit 1,
no record left empty or cut; once there is room, the same command in the same folder ends
as the uninterrupted run. On a small tmpfs, which needs root and mount; skipped otherwise."""

import json
import os
import shutil
import subprocess

import pytest
import torch
from omegaconf import OmegaConf
from PIL import Image

from .conftest import assert_ends_as, run_here

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        os.name != "posix" or os.geteuid() != 0 or shutil.which("mount") is None,
        reason="mounts a small tmpfs: needs root and mount",
    ),
]


def mount_tmpfs(folder, size_kb: int) -> bool:
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", folder])
    return done.returncode == 0


def files_read_back(run) -> None:
    """Every record the run left reads back whole: none is empty or cut."""
    for path in run.rglob("*"):
        if path.suffix == ".json":
            json.loads(path.read_text())
        elif path.suffix == ".yaml":
            assert OmegaConf.load(path) is not None, path
        elif path.suffix == ".ckpt":
            torch.load(path, map_location="cpu", weights_only=True)
        elif path.suffix == ".png":
            Image.open(path).verify()


@pytest.fixture
def small_disk(tmp_path):
    disk = tmp_path / "disk"
    if not mount_tmpfs(disk, 160):  # room for the run's start, not its checkpoints
        pytest.skip("this machine refuses to mount a tmpfs (a container without the right)")
    yield disk
    subprocess.run(["umount", disk], check=True)


def test_a_full_disk_is_one_line_leaves_no_cut_record_and_the_run_goes_on_once_there_is_room(
    tmp_path, small_disk, straight
):
    folder = small_disk / "run"
    full = run_here(small_disk / "outputs", "seed=0", f"hydra.run.dir={folder}")
    assert full.returncode == 1
    (line,) = full.stderr.splitlines()
    assert line.startswith(f"error: {folder}/") and line.endswith(": No space left on device")
    assert ": could not write " in line
    assert not (folder / "metrics.json").exists()
    assert not list(folder.rglob("*.tmp"))
    files_read_back(folder)

    subprocess.run(["mount", "-o", "remount,size=8m", small_disk], check=True)
    again = run_here(small_disk / "outputs", "seed=0", f"hydra.run.dir={folder}")
    assert again.returncode == 0, again.stderr[-3000:]
    assert_ends_as(folder, straight(0))
