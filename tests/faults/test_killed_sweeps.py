"""A sweep killed while a job trains, started again by the same command, goes on: each
job ends as it ends uninterrupted. The basic launcher (one process for all jobs) and
joblib (jobs in worker processes, whose parent is killed: the workers stop with it, saving
their step, and no orphan trains on beside the restarted sweep). The sequential sweeper's
restart: tests/e2e/test_sequential_sweep.py."""

import json
import os
import signal
import time
from pathlib import Path

import pytest

from ..command_line import run_command, run_command_forked, run_command_here
from .conftest import assert_ends_as, command, faulted, needs_fork

pytestmark = [pytest.mark.slow, needs_fork]

SEEDS = ["-m", "seed=0,1"]


def sweep_command(root: Path, *overrides: str) -> list[str]:
    """The suite's run swept over two seeds into ``root``; ``overrides`` come last (win)."""
    (python, dash_m, module), suites = command(root)[:3], command(root)[3:]
    return [python, dash_m, module, *SEEDS, *suites, *overrides, f"hydra.sweep.dir={root}"]


def test_a_basic_sweep_killed_in_its_first_job_goes_on_to_the_uninterrupted_results(
    tmp_path, straight
):
    sweep = tmp_path / "sweep"
    killed = run_command_forked(sweep_command(sweep), tmp_path, faulted("step@7:SIGKILL"))
    assert killed == -signal.SIGKILL
    assert (sweep / "seed=0" / "checkpoints" / "last.ckpt").is_file()  # of step 5
    assert not (sweep / "seed=1").exists()

    again = run_command_here(sweep_command(sweep), tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "2 jobs, 2 finished (0 diverged), 0 failed" in again.stdout + again.stderr
    for seed in (0, 1):
        assert_ends_as(sweep / f"seed={seed}", straight(seed))


def processes_with(marker: str) -> list[int]:
    """The processes whose environment holds ``marker`` (Linux's /proc)."""
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if marker.encode() in environ.read_bytes():
                found.append(int(environ.parent.name))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


# long enough that each job is still training when its worker finds the sweep's process
# gone (it looks every second): the 20-step run ends within a second of the kill
PARALLEL_RUN = "trainer.max_steps=200"


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="finds workers in /proc")
def test_a_parallel_sweep_whose_process_is_killed_leaves_no_worker_and_goes_on(tmp_path, straight):
    sweep, marker = tmp_path / "sweep", f"FAULTS_SWEEP={tmp_path}"
    launch = ["hydra/launcher=joblib", "hydra.launcher.n_jobs=2", PARALLEL_RUN]
    env = {"FAULTS_SWEEP": str(tmp_path), **faulted("step@7:SIGKILL:parent")}
    # a process of its own, not a fork of this multi-threaded test process: a fork that
    # starts workers can inherit a lock another thread held, and hang (one hung under xdist)
    killed = run_command(sweep_command(sweep, *launch), tmp_path, env)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    deadline = time.monotonic() + 60  # each orphan saves its step, then ends
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert processes_with(marker) == [], "a worker outlived the sweep's process"
    started = sorted(p.parent.parent.name for p in sweep.glob("*/.hydra/config.yaml"))
    stopped = sorted(p.parent.name for p in sweep.glob("*/stopped.json"))
    # each job that trained saved and stopped; one caught in Hydra's set-up (its config
    # written, no step taken) ended with nothing to save
    trained = sorted(p.parent.parent.name for p in sweep.glob("*/checkpoints/last.ckpt"))
    assert stopped and stopped == trained and set(stopped) <= set(started)
    assert not list(sweep.glob("*/metrics.json"))
    for name in stopped:
        step = json.loads((sweep / name / "stopped.json").read_text())["step"]
        assert 1 <= step < 200, name  # stopped where the kill found it, not at its end

    again = run_command(sweep_command(sweep, *launch), tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    for seed in (0, 1):
        assert_ends_as(sweep / f"seed={seed}", straight(seed, PARALLEL_RUN))
    assert not list(sweep.glob("*/stopped.json"))
    assert os.environ.get("FAULTS_SWEEP") is None  # the marker stayed in the sweep's processes
