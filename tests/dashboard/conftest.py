"""One tiny real two-job sweep through the command line, shared by the dashboard tests:
``model/norm=pre,post`` on 1-3 word copies of reversal, 30 steps at a high constant learning
rate, so ``val/seq_acc`` rises above 0 and a low target is reached at different steps; a
test_long split of 4-5 words; a fresh matplotlib cache, as in a new virtualenv."""

import subprocess
import sys

import pytest

SWEEP = ["-m", "experiment=smoke", "model/norm=pre,post"]
TINY = [
    "data.min_len=1",
    "data.max_len=3",
    "data.test_long_size=16",
    "data.test_long_max_len=5",
    "model.lr=1e-2",
    "model.schedule=constant",
    "trainer.max_steps=30",
    "trainer.val_check_interval=10",
    "callbacks.layer_stats.every_n_steps=10",
    "target_seq_acc=0.03",
    "~callbacks.progress_bar",
    "~callbacks.attention_maps",
    "~callbacks.norm_comparison",
]


@pytest.fixture(scope="package")
def sweep_run(tmp_path_factory, one_thread_env):
    """``(terminal output, sweep folder)`` of the sweep."""
    root = tmp_path_factory.mktemp("dashboard")
    env = {**one_thread_env, "MPLCONFIGDIR": str(root / "matplotlib")}
    command = [
        sys.executable,
        "-m",
        "transformer_lab.train",
        *SWEEP,
        *TINY,
        f"paths.outputs_root={root}",
    ]
    result = subprocess.run(command, cwd=root, capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    (sweep,) = (root / "multirun").iterdir()
    return result.stdout + result.stderr, sweep


@pytest.fixture(scope="package")
def runs(sweep_run):
    """The sweep's job folders, post-norm first."""
    _, sweep = sweep_run
    jobs = sorted(p for p in sweep.iterdir() if (p / ".hydra").is_dir())
    assert len(jobs) == 2
    return jobs
