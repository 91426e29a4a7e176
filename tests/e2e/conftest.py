"""The end-to-end runs that several test files use: the run that the kill, the interrupt and
the finished-run tests stop and resume, and the tiny real sweep the report tests read (built
once per test run, see tests/built_once.py)."""

import pytest

from ..built_once import as_completed, built_once, completed
from ..command_line import run_train_here, train_command

# The run that the kill and the interrupt tests stop and resume: short, mid-epoch when it is
# stopped, and drawing from the RNG, so an exact resume has something to prove.
RESUMABLE = [
    "experiment=smoke",
    "data.train_size=384",  # 12 batches per epoch: the stop lands mid-epoch
    "model.dropout=0.1",  # dropout draws from the RNG: the resume must restore it
    "optim.warmup_steps=10",
    "optim.schedule=noam",  # not cosine, which decays over trainer.max_steps: a run extended
    # from 20 to 40 steps trains what a 40-step run trains only under a schedule blind to it
    "trainer.max_steps=40",
    "trainer.val_check_interval=20",
    "trainer.deterministic=true",
    "~callbacks.progress_bar",
]


@pytest.fixture(scope="session")
def resumable_command():
    """``resumable_command(outputs_root, *overrides) -> argv`` of that run."""

    return lambda outputs_root, *overrides: train_command(outputs_root, *RESUMABLE, *overrides)


# One tiny real sweep through the command line, shared by the report tests: two learning
# rates x two seeds, where the huge learning rate diverges; sources of 3-10 words, and a
# test_long split of 11-12.
REPORT_TINY = [
    "experiment=smoke",
    "trainer.max_steps=8",
    "trainer.val_check_interval=4",
    "optim.schedule=constant",
    "~callbacks.progress_bar",
    "~callbacks.attention_maps",
    "data.test_long_size=32",
    "data.test_long_max_task_len=12",
]
REPORT_SWEEP = ["optim.lr=1e-3,1e3", "seed=0,1"]


@pytest.fixture(scope="session")
def tiny_sweep(tmp_path_factory):
    """``(completed process, sweep folder)`` of ``-m optim.lr=1e-3,1e3 seed=0,1``. Its
    readers run the report in it; one that changes anything else works on a copy."""
    folder, record = built_once(
        tmp_path_factory,
        "report_sweep",
        lambda folder: completed(
            run_train_here(folder / "outputs", "-m", *REPORT_SWEEP, *REPORT_TINY)
        ),
    )
    (sweep,) = (folder / "outputs" / "multirun").iterdir()
    return as_completed(record), sweep
