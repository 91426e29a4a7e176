"""Seeds until decided, from the command line: ``hydra/sweeper=sequential`` runs a 2 x 2
grid of experiment=smoke in stages of 3 and 6 seeds. One hypothesis (a learning rate of
1e-2 against 1e-5: the loss after 20 steps) is decided at the first look, so its other
configuration gets no more seeds; the other (d_ff 65 against 64: no real difference) is
not, so its configurations get three more. Killed in its second stage and started again by
the same command, the sweep continues: no finished job runs again, the stopped one resumes
from its last.ckpt (its path, in a folder named ``model.d_ff=...,seed=3``, quoted for
Hydra) to the end an uninterrupted run of it reaches, and the report gives each verdict at
its look."""

import json
import os
import re
import signal
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from ..command_line import (
    python_module,
    run_command,
    run_command_here,
    start_command,
    train_command,
    wait_until,
)

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
    fixed: {model.d_ff: 64}
    predicted: A better
  - id: d_ff_65_lowers_loss
    claim: "A d_ff of 65 lowers the loss against 64."
    source: "this test"
    metric: val/loss
    key: model.d_ff
    values: [65, 64]
    fixed: {optim.lr: 1e-2}
    predicted: A better

hydra:
  sweeper:
    params:
      optim.lr: 1e-2,1e-5
      model.d_ff: 64,65
    first: 3
    budget: 6
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


def seeds_of(sweep: Path, lr: str, d_ff: int) -> list[int]:
    names = [p.name for p in sweep.glob(f"*model.d_ff={d_ff},optim.lr={lr},seed=*") if p.is_dir()]
    return sorted(int(name.split("seed=")[1].split(",")[0]) for name in names)


def test_a_sequential_sweep_decides_early_extends_the_undecided_and_continues(tmp_path):
    sweep = tmp_path / "sweep"
    log = tmp_path / "first.log"  # a file, not a pipe: 12 jobs' tables would fill a pipe
    with log.open("w") as terminal:
        process = start_command(
            command(tmp_path), tmp_path, start_new_session=True, stdout=terminal
        )
        # the second stage's first job saved its step 5 (12 jobs first: seconds on an idle
        # 2-core machine); stopped there as a crash or a preemption stops it
        wait_until(process, lambda: list(sweep.glob("*seed=3*/checkpoints/last.ckpt")), 900)
        os.killpg(process.pid, signal.SIGKILL)
        assert process.wait(timeout=60) == -signal.SIGKILL
    (stopped,) = [p.parent.parent for p in sweep.glob("*seed=3*/checkpoints/last.ckpt")]
    assert not (stopped / "metrics.json").exists()
    first_stage = {
        p: p.stat().st_mtime_ns
        for p in sweep.glob("*/metrics.json")
        if re.search(r"seed=[012](,|$)", p.parent.name)
    }
    assert len(first_stage) == 12
    second_stage_done = len(list(sweep.glob("*seed=[345]/metrics.json")))  # 0 unless quick

    again = run_command(command(tmp_path), tmp_path)
    assert again.returncode == 0, again.stderr
    log = again.stdout + again.stderr
    assert "stage of 3 seeds: 4 configurations, 0 jobs to run" in log  # none run twice
    assert "look after 3 seeds: large_lr_lowers_loss supported" in log
    assert "look after 3 seeds: d_ff_65_lowers_loss inconclusive" in log
    to_run = 6 - second_stage_done  # lr=1e-2 only; the stopped job again, from its start
    assert f"stage of 6 seeds: 2 configurations, {to_run} jobs to run" in log
    assert {p: p.stat().st_mtime_ns for p in first_stage} == first_stage
    assert f"resuming {stopped} from {stopped / 'checkpoints' / 'last.ckpt'}" in log
    assert_as_uninterrupted(stopped, tmp_path)
    assert seeds_of(sweep, "0.01", 64) == [0, 1, 2, 3, 4, 5]
    assert seeds_of(sweep, "0.01", 65) == [0, 1, 2, 3, 4, 5]
    assert seeds_of(sweep, "1e-05", 64) == [0, 1, 2]  # decided: no more seeds
    assert seeds_of(sweep, "1e-05", 65) == [0, 1, 2]  # compared by neither rule
    assert len(list(sweep.glob("*/metrics.json"))) == 18

    report = run_command(python_module("transformer_lab.report", str(sweep)), tmp_path)
    assert report.returncode == 0, report.stderr
    assert "- **supported** after 3 seeds `large_lr_lowers_loss`" in report.stdout
    assert "- **inconclusive** after 6 seeds `d_ff_65_lowers_loss`" in report.stdout
    assert "each look is at 0.025" in report.stdout


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
