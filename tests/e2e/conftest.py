"""The end-to-end runs that several tests read: the run that the kill and the interrupt
tests stop and resume; the tiny real sweep the report tests read; the tiny real sweep the
dashboard tests read."""

import subprocess
import sys

import pytest

# The run that the kill and the interrupt tests stop and resume: short, mid-epoch when it is
# stopped, and drawing from the RNG, so an exact resume has something to prove.
RESUMABLE = [
    "experiment=smoke",
    "data.train_size=384",  # 12 batches per epoch: the stop lands mid-epoch
    "model.dropout=0.1",  # dropout draws from the RNG: the resume must restore it
    "model.warmup_steps=10",
    "trainer.max_steps=40",
    "trainer.val_check_interval=20",
    "trainer.deterministic=true",
    "~callbacks.progress_bar",
]


@pytest.fixture(scope="session")
def resumable_command():
    """``resumable_command(outputs_root, *overrides) -> argv`` of that run."""

    def command(outputs_root, *overrides):
        return [
            sys.executable,
            "-m",
            "transformer_lab.train",
            *RESUMABLE,
            *overrides,
            f"paths.outputs_root={outputs_root}",
        ]

    return command


# One tiny real sweep through the command line, shared by the report tests: two learning
# rates x two seeds, where the huge learning rate diverges; sources of 3-10 words, and a
# test_long split of 11-12.
REPORT_TINY = [
    "experiment=smoke",
    "trainer.max_steps=8",
    "trainer.val_check_interval=4",
    "model.schedule=constant",
    "~callbacks.progress_bar",
    "~callbacks.attention_maps",
    "data.test_long_size=32",
    "data.test_long_max_len=12",
]
REPORT_SWEEP = ["model.lr=1e-3,1e3", "seed=0,1"]


@pytest.fixture(scope="package")
def tiny_sweep(tmp_path_factory, one_thread_env):
    """``(completed process, sweep folder)`` of ``-m model.lr=1e-3,1e3 seed=0,1``."""
    root = tmp_path_factory.mktemp("tiny_sweep")
    command = [
        sys.executable,
        "-m",
        "transformer_lab.train",
        "-m",
        *REPORT_SWEEP,
        *REPORT_TINY,
        f"paths.outputs_root={root}",
    ]
    result = subprocess.run(
        command, cwd=root, capture_output=True, text=True, env=one_thread_env, timeout=600
    )
    (sweep,) = (root / "multirun").iterdir()
    return result, sweep


# One tiny real two-job sweep through the command line, shared by the dashboard tests:
# ``model/norm=pre,post`` on 1-3 word copies of reversal, 30 steps at a high constant
# learning rate, so ``val/seq_acc`` rises above 0 and a low target is reached at different
# steps; a test_long split of 4-5 words; a fresh matplotlib cache, as in a new virtualenv.
DASHBOARD_SWEEP = ["-m", "experiment=smoke", "model/norm=pre,post"]
DASHBOARD_TINY = [
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
    """``(terminal output, sweep folder)`` of the dashboard's sweep."""
    root = tmp_path_factory.mktemp("dashboard")
    env = {**one_thread_env, "MPLCONFIGDIR": str(root / "matplotlib")}
    command = [
        sys.executable,
        "-m",
        "transformer_lab.train",
        *DASHBOARD_SWEEP,
        *DASHBOARD_TINY,
        f"paths.outputs_root={root}",
    ]
    result = subprocess.run(command, cwd=root, capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    (sweep,) = (root / "multirun").iterdir()
    return result.stdout + result.stderr, sweep


@pytest.fixture(scope="package")
def runs(sweep_run):
    """The dashboard sweep's job folders, post-norm first."""
    _, sweep = sweep_run
    jobs = sorted(p for p in sweep.iterdir() if (p / ".hydra").is_dir())
    assert len(jobs) == 2
    return jobs
