"""Seeds until decided, from the command line: ``hydra/sweeper=sequential`` runs three
learning rates of experiment=smoke in stages of 4 and 8 seeds. Its hypothesis (1e-2 lowers
the loss after 20 steps more than 1e-5) cannot be decided at 4 seeds whatever they show
(an exact test of 4 pairs gives no one-sided p below 1/16; Holm's first step over its two
tests at a look's 0.025 asks 0.0125), so the sweeper adds seeds and decides it at 8. The
third rate, 1e-3, is compared by no rule, so it is not run at all. Killed in its second
stage and started again by the same command, the sweep continues: no finished job runs
again, the stopped one resumes from its own last.ckpt in its own folder to the end an
uninterrupted run of it reaches, and the report gives the verdict at its look."""

import json
import os
import re
import signal
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from ..command_line import (
    HANG_SECONDS,
    python_module,
    run_command,
    run_command_here,
    start_command,
    train_command,
    wait_until,
)
from ..docs.examples import problems, sequential_verdict

pytestmark = pytest.mark.slow

EXPERIMENT = """\
# @package _global_
defaults:
  - smoke
  - override /hydra/sweeper: sequential

optim:
  schedule: constant

hypotheses:
  - id: large_lr_lowers_loss
    claim: "In 20 steps a constant learning rate of 1e-2 lowers the loss more than 1e-5."
    source: "this test"
    metric: val/loss
    key: optim.lr
    values: [1e-2, 1e-5]
    predicted: A better

hydra:
  sweeper:
    params:
      optim.lr: 1e-2,1e-3,1e-5
    first: 4
    budget: 8
"""
QUIET = [
    "~callbacks.progress_bar",
    "~callbacks.attention_maps",
    "~callbacks.norm_comparison",
    "callbacks.last_checkpoint.every_n_train_steps=5",  # a stopped job has a step to resume
]


def command(root: Path) -> list[str]:
    (root / "conf" / "experiment").mkdir(parents=True, exist_ok=True)
    (root / "conf" / "experiment" / "seq.yaml").write_text(EXPERIMENT)
    sweep = f"hydra.sweep.dir={root / 'sweep'}"
    return train_command(
        root, "--config-dir", str(root / "conf"), "-m", "experiment=seq", *QUIET, sweep
    )


def seeds_of(sweep: Path, lr: str) -> list[int]:
    names = [p.name for p in sweep.glob(f"optim.lr={lr},seed=*") if p.is_dir()]
    return sorted(int(name.split("seed=")[1].split(",")[0]) for name in names)


def test_a_sequential_sweep_adds_seeds_where_it_cannot_yet_decide_and_continues(tmp_path):
    sweep = tmp_path / "sweep"
    log = tmp_path / "first.log"  # a file, not a pipe: 8 jobs' tables would fill a pipe
    with log.open("w") as terminal:
        process = start_command(
            command(tmp_path), tmp_path, start_new_session=True, stdout=terminal
        )
        # the second stage's first job saved its step 5 (8 jobs first: seconds on an idle
        # 2-core machine); stopped there as a crash or a preemption stops it
        wait_until(process, lambda: list(sweep.glob("*seed=4*/checkpoints/last.ckpt")))
        os.killpg(process.pid, signal.SIGKILL)
        assert process.wait(timeout=HANG_SECONDS) == -signal.SIGKILL
    (stopped,) = [p.parent.parent for p in sweep.glob("*seed=4*/checkpoints/last.ckpt")]
    assert not (stopped / "metrics.json").exists()
    first_stage = {
        p: p.stat().st_mtime_ns
        for p in sweep.glob("*/metrics.json")
        if re.search(r"seed=[0-3](,|$)", p.parent.name)
    }
    assert len(first_stage) == 8
    second_stage_done = len(list(sweep.glob("*seed=[4-7]/metrics.json")))  # 0 unless quick
    first_log = log.read_text()
    assert "look after 4 seeds: large_lr_lowers_loss inconclusive (too few seeds)" in first_log

    again = run_command(command(tmp_path), tmp_path)
    assert again.returncode == 0, again.stderr
    log = again.stdout + again.stderr
    assert "stage of 4 seeds: 2 configurations, 0 jobs to run" in log  # none run twice
    to_run = 8 - second_stage_done  # lr 1e-2 and 1e-5 only; the stopped job resumes
    assert f"stage of 8 seeds: 2 configurations, {to_run} jobs to run" in log
    assert "look after 8 seeds: large_lr_lowers_loss supported" in log
    assert log.count(f"tensorboard: tensorboard --logdir {sweep} (") == 1  # the sweep's, once
    assert {p: p.stat().st_mtime_ns for p in first_stage} == first_stage
    assert f"resuming {stopped} from {stopped / 'checkpoints' / 'last.ckpt'}" in log
    assert_as_uninterrupted(stopped, tmp_path)
    assert seeds_of(sweep, "0.01") == seeds_of(sweep, "1e-05") == list(range(8))
    assert seeds_of(sweep, "0.001") == []  # compared by no rule: not run
    assert len(list(sweep.glob("*/metrics.json"))) == 16

    report = run_command(python_module("transformer_lab.report", str(sweep)), tmp_path)
    assert report.returncode == 0, report.stderr
    assert "- **supported** after 8 seeds `large_lr_lowers_loss`" in report.stdout
    assert "each look is at 0.025" in report.stdout
    assert "exploratory" not in report.stdout  # the rule the sweep started with
    # docs/sweeps.md quotes the undecided verdict: its words, its means within tolerance
    found = problems("sweeps-sequential", sequential_verdict((sweep / "report.md").read_text()))
    assert not found, "\n".join(found)


def assert_as_uninterrupted(job: Path, root: Path) -> None:
    """The resumed ``job`` ended as a run of its overrides, uninterrupted, ends."""
    typed = OmegaConf.load(job / ".hydra" / "overrides.yaml")  # the sweep's and the job's own
    overrides = [o for o in typed if not o.startswith(("paths.outputs_root=", "ckpt_path="))]
    straight = root / "straight"
    run = train_command(straight, "--config-dir", str(root / "conf"), *overrides)
    assert run_command_here(run, root).returncode == 0
    (folder,) = (straight / "runs").iterdir()
    want, got = (json.loads((f / "metrics.json").read_text()) for f in (folder, job))
    assert {k: v for k, v in got.items() if k != "train_seconds"} == {
        k: v for k, v in want.items() if k != "train_seconds"
    }
