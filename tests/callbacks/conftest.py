"""One tiny real run with every callback switched to its busiest setting, shared by the
tests that read its TensorBoard events and files (a run costs seconds; reading is free)."""

import subprocess
import sys

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

TINY = ["experiment=smoke", "~callbacks.progress_bar"]
STEPS = 12


@pytest.fixture(autouse=True, scope="module")
def one_thread(one_thread):
    """Every test here runs torch on one thread (the fixture of tests/conftest.py)."""


@pytest.fixture(scope="package")
def tiny_run(tmp_path_factory, one_thread_env):
    """The run folder of a 12-step post-norm run: attention maps at every validation (steps
    6 and 12), layer stats every 3 steps."""
    root = tmp_path_factory.mktemp("tiny_run")
    command = [
        sys.executable,
        "-m",
        "transformer_lab.train",
        *TINY,
        f"trainer.max_steps={STEPS}",
        "trainer.val_check_interval=6",
        "callbacks.attention_maps.every_n_validations=1",
        "callbacks.layer_stats.every_n_steps=3",
        f"paths.outputs_root={root}",
    ]
    result = subprocess.run(
        command, cwd=root, capture_output=True, text=True, env=one_thread_env, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    (run,) = (root / "runs").iterdir()
    return run


@pytest.fixture(scope="package")
def events(tiny_run) -> EventAccumulator:
    accumulator = EventAccumulator(str(tiny_run), size_guidance={"images": 0, "scalars": 0})
    accumulator.Reload()
    return accumulator
