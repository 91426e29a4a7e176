"""One tiny real sweep through the command line, shared by the report tests: two learning
rates x two seeds, where the huge learning rate diverges; sources of 3-10 words, and a
test_long split of 11-12."""

import subprocess
import sys

import pytest

TINY = ["experiment=smoke", "trainer.max_steps=8", "trainer.val_check_interval=4",
        "model.schedule=constant", "~callbacks.progress_bar", "~callbacks.attention_maps",
        "data.test_long_size=32", "data.test_long_max_len=12"]  # fmt: skip
SWEEP = ["model.lr=1e-3,1e3", "seed=0,1"]


@pytest.fixture(scope="package")
def tiny_sweep(tmp_path_factory, one_thread_env):
    """``(completed process, sweep folder)`` of ``-m model.lr=1e-3,1e3 seed=0,1``."""
    root = tmp_path_factory.mktemp("tiny_sweep")
    command = [sys.executable, "-m", "transformer_lab.train", "-m", *SWEEP, *TINY,
               f"paths.outputs_root={root}"]  # fmt: skip
    result = subprocess.run(
        command, cwd=root, capture_output=True, text=True, env=one_thread_env, timeout=600
    )
    (sweep,) = (root / "multirun").iterdir()
    return result, sweep
