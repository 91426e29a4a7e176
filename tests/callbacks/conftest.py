"""One tiny real run with every callback switched to its busiest setting, shared by the
tests that read its TensorBoard events and files (a run costs seconds; reading is free)."""

import os
import subprocess
import sys

import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

TINY = ["experiment=smoke", "~callbacks.progress_bar"]
STEPS = 12


@pytest.fixture(autouse=True, scope="package")
def one_thread():
    """Tiny tensors gain nothing from intra-op threads, and lose a lot under CPU contention."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# a tiny model gains nothing from intra-op threads, and loses a lot when the CPU is shared
ONE_THREAD = {**os.environ, "OMP_NUM_THREADS": "1"}


@pytest.fixture(scope="package")
def tiny_run(tmp_path_factory):
    """The run folder of a 12-step post-norm run: attention maps at every validation (steps
    6 and 12), layer stats every 3 steps."""
    root = tmp_path_factory.mktemp("tiny_run")
    command = [sys.executable, "-m", "transformer_lab.train", *TINY,
               f"trainer.max_steps={STEPS}", "trainer.val_check_interval=6",
               "callbacks.attention_maps.every_n_validations=1",
               "callbacks.layer_stats.every_n_steps=3", f"paths.outputs_root={root}"]  # fmt: skip
    result = subprocess.run(
        command, cwd=root, capture_output=True, text=True, env=ONE_THREAD, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    (run,) = (root / "runs").iterdir()
    return run


@pytest.fixture(scope="package")
def events(tiny_run) -> EventAccumulator:
    accumulator = EventAccumulator(str(tiny_run), size_guidance={"images": 0, "scalars": 0})
    accumulator.Reload()
    return accumulator
