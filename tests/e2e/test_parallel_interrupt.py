"""Ctrl-C in a parallel sweep (``hydra/launcher=joblib``), sent as a terminal sends it: to
the sweep's whole process group. Every running job saves ``last.ckpt`` at the step it
reached, no job starts after it, the sweep exits 130, and the terminal says, per stopped
job, the command that resumes it; that command finishes the job in its own folder."""

import json
import os
import re
import shlex
import signal
import sys

import pytest
import torch

from ..command_line import HANG_SECONDS, run_command_here, start_command, train_command, wait_until

STEPS = 200
JOB = [
    "experiment=smoke",
    "data.train_size=384",
    f"trainer.max_steps={STEPS}",
    "trainer.val_check_interval=20",
    "~callbacks.norm_comparison",
    "~callbacks.attention_maps",
    "callbacks.last_checkpoint.every_n_train_steps=1000",
]  # only the signal's own save
STOPPED = re.compile(r"\] stopped +(\S+)  at step (\d+)  \(\d+ s\)  resume: (.+)$", re.M)


def job_folder(sweep, seed):
    (folder,) = [p for p in sweep.iterdir() if p.is_dir() and f"seed={seed}" in p.name]
    return folder


@pytest.mark.slow
def test_ctrl_c_stops_a_parallel_sweep_with_each_running_job_saved(tmp_path):
    sweep = tmp_path / "sweep"
    joblib = ["-m", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2"]
    command = train_command(tmp_path, *joblib, *JOB, "seed=0,1,2", f"hydra.sweep.dir={sweep}")
    process = start_command(command, tmp_path, start_new_session=True)  # a group, as in a terminal
    # both jobs in training
    wait_until(process, lambda: len(list(sweep.glob("*/checkpoints/best.ckpt"))) >= 2)
    os.killpg(process.pid, signal.SIGINT)
    output, _ = process.communicate(timeout=HANG_SECONDS)

    assert process.returncode == 130, output
    assert "Traceback" not in output
    assert "2 jobs saved their last.ckpt (resume commands above), 1 did not start" in output
    stopped = {name: (int(step), resume) for name, step, resume in STOPPED.findall(output)}
    first, second, third = (job_folder(sweep, seed) for seed in (0, 1, 2))
    assert sorted(stopped) == sorted([first.name, second.name])
    for folder in (first, second):
        step = stopped[folder.name][0]
        assert 20 <= step < STEPS
        checkpoint = torch.load(folder / "checkpoints" / "last.ckpt", weights_only=True)
        assert checkpoint["global_step"] == step  # saved at the step reached
        assert not (folder / "metrics.json").exists()
    assert not (third / "checkpoints").exists()  # started after the Ctrl-C: never ran
    summary = json.loads((sweep / "summary.json").read_text())
    assert summary["finished"] == 0
    assert summary["unfinished"] == {
        first.name: "resumable from checkpoints/last.ckpt",
        second.name: "resumable from checkpoints/last.ckpt",
        third.name: "no checkpoint",
    }
    # the worker's record names the sweep's command, not the worker's own
    environment = json.loads((first / "environment.json").read_text())
    assert environment["command"] == shlex.join(command)

    resume = shlex.split(stopped[first.name][1])
    assert resume[:3] == [sys.executable, "-m", "transformer_lab.train"]
    resumed = run_command_here(resume, cwd=tmp_path)  # one job: no launcher
    assert resumed.returncode == 0, shlex.join(resume) + resumed.stderr
    metrics = json.loads((first / "metrics.json").read_text())
    assert metrics["global_step"] == STEPS
