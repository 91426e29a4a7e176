"""The run that the kill and the interrupt tests stop and resume: short, mid-epoch when it
is stopped, and drawing from the RNG, so an exact resume has something to prove."""

import sys

import pytest

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
