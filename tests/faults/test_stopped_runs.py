"""Ctrl-C, SIGTERM and SLURM's warning signal at every moment of a run (setting up, a
step that a validation follows, the closing validation, the test): last.ckpt stays, one
line says how to resume, the exit status is 128 + the signal, and following that line (or,
for SIGUSR1, the requeue: the same command in the same folder) ends as the uninterrupted
run ends. Each signal is sent by the run to itself at that moment, in the test process."""

import json
import re
import shlex
import signal

import pytest
import torch

from ..command_line import run_command_here
from .conftest import assert_ends_as, only_run, run_here

pytestmark = pytest.mark.slow

LINE = re.compile(r"^(SIG\w+) at step (\d+): saved (.+); resume with: (.+)$", re.M)


def seconds_of_fit(checkpoint) -> float:
    """The run's seconds of fit when ``checkpoint`` was saved (its FitClock's)."""
    return torch.load(checkpoint, weights_only=True)["callbacks"]["FitClock"]["seconds"]


@pytest.mark.parametrize(
    ("fault", "step"),
    [
        ("setup:SIGINT", 1),  # noted while the run sets up: it stops after its first step
        ("step@10:SIGTERM", 10),  # a step that a validation follows: it stops after it
        ("closing_validation:SIGINT", 20),
    ],
)
def test_a_stopped_run_says_how_to_resume_and_that_command_ends_as_the_uninterrupted_run(
    tmp_path, straight, fault, step
):
    outputs = tmp_path / "outputs"
    stopped = run_here(outputs, "seed=0", fault=fault)
    signum = signal.Signals[fault.rsplit(":", 1)[1]]
    said = stopped.stdout + stopped.stderr
    assert stopped.returncode == 128 + signum, said[-3000:]
    ((name, at, saved, resume),) = LINE.findall(said)
    run = only_run(outputs)
    assert (name, int(at), saved) == (signum.name, step, str(run / "checkpoints" / "last.ckpt"))
    assert not (run / "metrics.json").exists()
    fitted = seconds_of_fit(run / "checkpoints" / "last.ckpt")  # before the stop
    assert fitted > 0

    resumed = run_command_here(shlex.split(resume), tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert only_run(outputs) == run
    assert_ends_as(run, straight(0))
    # the record's seconds are the whole run's, not only the resumed part's
    assert json.loads((run / "metrics.json").read_text())["train_seconds"] >= round(fitted, 1)


def test_a_requeue_signal_during_the_test_keeps_the_fits_end_and_the_requeued_job_tests_again(
    tmp_path, straight
):
    """SIGUSR1 while the run tests: the fit's last.ckpt (its end, the closing validation in
    it) is the resume point; the requeued job (the same command, in the same folder) goes
    on from it without training or validating again."""
    outputs, folder = tmp_path / "outputs", tmp_path / "outputs" / "runs" / "job"
    stopped = run_here(outputs, "seed=0", f"hydra.run.dir={folder}", fault="test:SIGUSR1")
    assert stopped.returncode == 128 + signal.SIGUSR1, stopped.stderr[-3000:]
    ((name, at, saved, _),) = LINE.findall(stopped.stdout)
    assert (name, int(at), saved) == ("SIGUSR1", 20, str(folder / "checkpoints" / "last.ckpt"))

    requeued = run_here(outputs, "seed=0", f"hydra.run.dir={folder}")
    assert requeued.returncode == 0, requeued.stderr[-3000:]
    assert f"resuming {folder} from {folder / 'checkpoints' / 'last.ckpt'}" in (
        requeued.stdout + requeued.stderr
    )
    assert_ends_as(folder, straight(0))
