"""The fault-injection suite's shared run: one tiny deterministic configuration, its
uninterrupted runs (seeds 0 and 1) built once per test run (tests/built_once.py), and how a
faulted run is compared with them.

Faults land at a named moment of a run, deterministically: ``TRANSFORMER_LAB_FAULT``
(src/transformer_lab/training/faults.py) makes the run signal itself there. A SIGKILL needs
a process of its own (a fork of the test process: torch and Lightning are imported there
already); a signal the run handles (SIGINT, SIGTERM, SIGUSR1) is sent to the
test process while the command runs in it, which costs no start of torch and Lightning.
"""

import json
import os
from pathlib import Path

import pytest
import torch

from ..built_once import built_once
from ..command_line import run_command_forked, run_command_here, train_command

# 20 steps, validated at 10 and 20 (the closing validation), last.ckpt every 5 steps;
# dropout draws from the RNG, so an exact resume has something to prove
FAULTS = [
    "experiment=smoke",
    "data.train_size=256",
    "model.dropout=0.1",
    "optim.warmup_steps=5",
    "optim.schedule=noam",
    "trainer.max_steps=20",
    "trainer.val_check_interval=10",
    "trainer.deterministic=true",
    "callbacks.last_checkpoint.every_n_train_steps=5",
    "~callbacks.progress_bar",
    "~callbacks.attention_maps",
    "~callbacks.norm_comparison",
]
TIMINGS = ("train_seconds",)  # what may differ between two runs of the same config
ENVIRONMENT = "TRANSFORMER_LAB_FAULT"
# a SIGKILL lands in a fork of the test process
needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="forks the test process (POSIX)")


def command(outputs_root: Path, *overrides: str) -> list[str]:
    """``python -m transformer_lab.train`` of the suite's run into ``outputs_root``."""
    return train_command(outputs_root, *FAULTS, *overrides)


def faulted(fault: str | None) -> dict[str, str]:
    """The environment that makes the run signal itself at ``fault``."""
    return {ENVIRONMENT: fault} if fault else {}


def run_here(root: Path, *overrides: str, fault: str | None = None):
    """The suite's run in the test process, to its end."""
    return run_command_here(command(root, *overrides), root.parent, faulted(fault))


def run_apart(root: Path, *overrides: str, fault: str | None = None) -> int:
    """The suite's run in a fork of the test process (for a SIGKILL), to its end: its exit
    status, ``-signal`` where a signal killed it."""
    return run_command_forked(command(root, *overrides), root.parent, faulted(fault))


def only_run(outputs_root: Path) -> Path:
    (run,) = (outputs_root / "runs").iterdir()
    return run


def metrics_of(run: Path) -> dict:
    """``metrics.json`` but for its timings."""
    metrics = json.loads((run / "metrics.json").read_text())
    return {key: value for key, value in metrics.items() if key not in TIMINGS}


def weights(checkpoint: Path) -> dict:
    saved = torch.load(checkpoint, map_location="cpu", weights_only=True)
    return {"global_step": saved["global_step"], **saved["state_dict"]}


def assert_ends_as(run: Path, straight: Path) -> None:
    """``run`` ended as the uninterrupted ``straight``: its metrics.json (every key but the
    timings), one best.ckpt and one last.ckpt, each with the same step and weights."""
    assert metrics_of(run) == metrics_of(straight)
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["best.ckpt", "last.ckpt"]
    for name in ("best.ckpt", "last.ckpt"):
        got, want = weights(run / "checkpoints" / name), weights(straight / "checkpoints" / name)
        assert got.keys() == want.keys()
        assert all(torch.equal(got[k], want[k]) for k in want if k != "global_step"), name
        assert got["global_step"] == want["global_step"], name


@pytest.fixture(scope="session")
def straight(tmp_path_factory):
    """``straight(seed, *overrides) -> run folder`` of the suite's run (with ``overrides``)
    uninterrupted, built once."""

    def build(seed: int, *overrides: str) -> Path:
        def uninterrupted(folder: Path) -> dict:
            result = run_here(folder / "outputs", f"seed={seed}", *overrides)
            assert result.returncode == 0, result.stderr[-3000:]
            return {}

        name = "_".join([f"faults_straight_seed{seed}", *overrides]).replace("=", "")
        folder, _ = built_once(tmp_path_factory, name, uninterrupted)
        return only_run(folder / "outputs")

    return build
