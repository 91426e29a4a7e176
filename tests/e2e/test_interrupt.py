"""Ctrl-C and SIGTERM: last.ckpt at the step reached, exit 130 / 143, one line that says
how to go on; following that line ends exactly where an uninterrupted run ends, in the
same folder. SLURM's warning signal under submitit: last.ckpt at the step reached, the
signal handed on to submitit's handler, and the requeued job (the same command in the same
folder) ends exactly where an uninterrupted run ends."""

import json
import re
import shlex
import signal
import sys

import pytest
import torch

from ..command_line import (
    HANG_SECONDS,
    python_code,
    run_command,
    run_command_here,
    start_command,
    train_cli_code,
    wait_until,
)
from ..docs.blocks import find
from ..docs.compare import matches_template, template_line

# no periodic save: the signal's own last.ckpt is the only one
ONLY_THE_SIGNAL_SAVES = [
    "callbacks.last_checkpoint.every_n_train_steps=1000",
    "~callbacks.norm_comparison",
]


@pytest.fixture
def run(resumable_command):
    """``run(outputs_root) -> argv`` of the run these tests stop."""
    return lambda outputs_root: resumable_command(outputs_root, *ONLY_THE_SIGNAL_SAVES)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, resumable_command):
    """The run folder of that run, uninterrupted: what every resumed run must end as."""
    folder = tmp_path_factory.mktemp("uninterrupted")
    command = resumable_command(folder / "outputs", *ONLY_THE_SIGNAL_SAVES)
    straight = run_command_here(command, cwd=folder)  # no signal: no process
    assert straight.returncode == 0, straight.stdout + straight.stderr
    (run,) = (folder / "outputs" / "runs").iterdir()
    return run


def assert_ends_as(run, straight_run) -> None:
    """``run`` ended with the metrics and the weights of ``straight_run``."""
    expected = json.loads((straight_run / "metrics.json").read_text())
    got = json.loads((run / "metrics.json").read_text())
    for key in ("val/loss", "val/seq_acc", "test/loss", "test/token_acc", "global_step"):
        assert got[key] == pytest.approx(expected[key], abs=1e-6), key
    a = torch.load(straight_run / "checkpoints" / "last.ckpt", weights_only=True)["state_dict"]
    b = torch.load(run / "checkpoints" / "last.ckpt", weights_only=True)["state_dict"]
    assert a.keys() == b.keys()
    assert max((a[k].float() - b[k].float()).abs().max().item() for k in a) <= 1e-6


LINE = re.compile(r"^(SIGINT|SIGTERM|SIGUSR1) at step (\d+): saved (.+); resume with: (.+)$", re.M)


def signal_after_first_validation(process, outputs_root, signum) -> str:
    """Send ``signum`` once the step-20 validation saved best.ckpt; the job's output."""
    wait_until(process, lambda: list(outputs_root.glob("runs/*/checkpoints/best.ckpt")))
    process.send_signal(signum)
    output, _ = process.communicate(timeout=HANG_SECONDS)
    return output


@pytest.mark.slow
def test_ctrl_c_saves_the_step_reached_and_the_printed_command_resumes_it_exactly(
    tmp_path, run, uninterrupted
):
    stopped_root = tmp_path / "stopped"
    process = start_command(run(stopped_root), tmp_path)
    output = signal_after_first_validation(process, stopped_root, signal.SIGINT)
    assert process.returncode == 130, output
    (line,) = LINE.findall(output)
    name, step, saved, command = line[0], int(line[1]), line[2], line[3]
    printed = next(said for said in output.split("\n") if said.startswith("SIGINT at step"))
    console_script = printed.replace(f"{sys.executable} -m transformer_lab.train", "tlab-train")
    shown = template_line(find("docs/run-folder.md", "run-folder-sigint").text)
    assert matches_template(shown, console_script), (shown, printed)  # what the doc says
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
    assert_ends_as(run, uninterrupted)


# What submitit's handler of SLURM's warning signal does, installed before the job runs as
# submitit installs it: requeue the job (here: say so) and exit (submitit: sys.exit(-1)).
SUBMITIT_STAND_IN = (
    "import signal\n"
    "def requeue(signum, frame):\n"
    "    print('requeued on', signal.Signals(signum).name, flush=True)\n"
    "    sys.exit(-1)\n"
    "signal.signal(signal.SIGUSR1, requeue)\n"
)


@pytest.mark.slow
def test_a_requeued_slurm_job_resumes_its_own_last_checkpoint_exactly(tmp_path, run, uninterrupted):
    """SIGUSR1 (SLURM's ``--signal``, submitit's before 1.5), then the requeue: the same
    command, in the same job folder (a requeued submitit job resolves the same one)."""
    outputs, folder = tmp_path / "outputs", tmp_path / "outputs" / "runs" / "job"
    overrides = run(outputs)[3:]  # python -m transformer_lab.train <overrides>
    job = python_code(SUBMITIT_STAND_IN + train_cli_code(*overrides, f"hydra.run.dir={folder}"))
    process = start_command(job, tmp_path)
    output = signal_after_first_validation(process, outputs, signal.SIGUSR1)
    assert process.returncode == 255, output  # submitit's exit, after the checkpoint
    (line,) = LINE.findall(output)
    assert line[0] == "SIGUSR1" and line[2] == str(folder / "checkpoints" / "last.ckpt")
    assert output.index(line[3]) < output.index("requeued on SIGUSR1")  # saved, then handed on
    step = torch.load(line[2], weights_only=True)["global_step"]
    assert 20 <= step == int(line[1]) < 40
    assert not (folder / "metrics.json").exists()

    requeued = run_command(job, cwd=tmp_path)
    assert requeued.returncode == 0, requeued.stdout[-3000:] + requeued.stderr[-3000:]
    said = requeued.stdout + requeued.stderr
    assert f"resuming {folder} from {folder / 'checkpoints' / 'last.ckpt'}" in said
    assert list((outputs / "runs").iterdir()) == [folder]
    assert not (folder / "stopped.json").exists()
    assert_ends_as(folder, uninterrupted)


@pytest.mark.slow
def test_sigterm_saves_the_step_reached_and_exits_143(tmp_path, run):
    process = start_command(run(tmp_path / "outputs"), tmp_path)
    output = signal_after_first_validation(process, tmp_path / "outputs", signal.SIGTERM)
    assert process.returncode == 143, output
    (line,) = LINE.findall(output)
    assert line[0] == "SIGTERM"
    assert torch.load(line[2], weights_only=True)["global_step"] == int(line[1]) >= 20
