"""Ctrl-C and SIGTERM: last.ckpt at the step reached, exit 130 / 143, one line that says
how to go on; following that line ends exactly where an uninterrupted run ends, in the
same folder."""

import json
import re
import shlex
import signal
import time

import pytest
import torch

from ..command_line import run_command, run_command_here, start_command

# no periodic save: the signal's own last.ckpt is the only one
ONLY_THE_SIGNAL_SAVES = [
    "callbacks.last_checkpoint.every_n_train_steps=1000",
    "~callbacks.norm_comparison",
]


@pytest.fixture
def run(resumable_command):
    """``run(outputs_root) -> argv`` of the run these tests stop."""
    return lambda outputs_root: resumable_command(outputs_root, *ONLY_THE_SIGNAL_SAVES)


LINE = re.compile(r"^(SIGINT|SIGTERM) at step (\d+): saved (.+); resume with: (.+)$", re.M)


def signal_after_first_validation(process, outputs_root, signum) -> str:
    """Send ``signum`` once the step-20 validation saved best.ckpt; the job's output."""
    deadline = time.monotonic() + 300
    while not list(outputs_root.glob("runs/*/checkpoints/best.ckpt")):
        assert process.poll() is None, process.stdout.read()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    process.send_signal(signum)
    output, _ = process.communicate(timeout=300)
    return output


@pytest.mark.slow
def test_ctrl_c_saves_the_step_reached_and_the_printed_command_resumes_it_exactly(tmp_path, run):
    straight_root, stopped_root = tmp_path / "straight", tmp_path / "stopped"
    straight = run_command_here(run(straight_root), cwd=tmp_path)  # no signal: no process
    assert straight.returncode == 0, straight.stdout + straight.stderr

    process = start_command(run(stopped_root), tmp_path)
    output = signal_after_first_validation(process, stopped_root, signal.SIGINT)
    assert process.returncode == 130, output
    (line,) = LINE.findall(output)
    name, step, saved, command = line[0], int(line[1]), line[2], line[3]
    (run,) = (stopped_root / "runs").iterdir()
    assert name == "SIGINT" and saved == str(run / "checkpoints" / "last.ckpt")
    checkpoint = torch.load(saved, weights_only=True)
    assert checkpoint["global_step"] == step
    assert 20 <= step < 40  # the step reached, not the last periodic save (there is none)
    assert not (run / "metrics.json").exists()

    resumed = run_command(shlex.split(command), cwd=tmp_path)  # its stderr: no warning
    assert resumed.returncode == 0, resumed.stderr
    assert list((stopped_root / "runs").iterdir()) == [run]  # no stray folder
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["best.ckpt", "last.ckpt"]
    said = resumed.stdout + resumed.stderr
    assert "exists and is not empty" not in said
    assert "dataloader is not resumable" not in said
    assert json.loads((run / "environment.json").read_text())["resumed"]

    (straight_run,) = (straight_root / "runs").iterdir()
    expected = json.loads((straight_run / "metrics.json").read_text())
    got = json.loads((run / "metrics.json").read_text())
    for key in ("val/loss", "val/seq_acc", "test/loss", "test/token_acc", "global_step"):
        assert got[key] == pytest.approx(expected[key], abs=1e-6), key
    a = torch.load(straight_run / "checkpoints" / "last.ckpt", weights_only=True)["state_dict"]
    b = torch.load(run / "checkpoints" / "last.ckpt", weights_only=True)["state_dict"]
    assert a.keys() == b.keys()
    assert max((a[k].float() - b[k].float()).abs().max().item() for k in a) <= 1e-6


@pytest.mark.slow
def test_sigterm_saves_the_step_reached_and_exits_143(tmp_path, run):
    process = start_command(run(tmp_path / "outputs"), tmp_path)
    output = signal_after_first_validation(process, tmp_path / "outputs", signal.SIGTERM)
    assert process.returncode == 143, output
    (line,) = LINE.findall(output)
    assert line[0] == "SIGTERM"
    assert torch.load(line[2], weights_only=True)["global_step"] == int(line[1]) >= 20
