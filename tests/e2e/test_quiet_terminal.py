"""A run's terminal, counted: one line of ours per event of the job, its progress bars and
its two tables, and none of the libraries' chatter (console.py says what is dropped and
why). The main job's settings at the smoke run's size, in a process of its own: a process
prints what a user sees, library notices included."""

import re

import pytest

from ..command_line import run_train

pytestmark = pytest.mark.slow  # a real 20-step run in a process

RUN = ["experiment=smoke", "optim.warmup_steps=5", "samples=3"]  # the default callbacks
TABLE = re.compile(r"^\s*[┏┃┡│└]|^\s+(test metrics|sample generations)")
PROGRESS = re.compile(r"^(step \d+/\d+|Testing) ")
LOG = re.compile(r"^\[[\d\-: ,]+\]\[([\w.]+)\]\[(\w+)\] - (\w+)")
CHATTER = (
    "Seed set to",
    "GPU available",
    "TPU available",
    "Total params",
    "Non-trainable params",
    "Trainer already configured",
    "log_every_n_steps",
    "sync_dist",
    "anonymous",
    "\x1b[",
)


def test_a_run_prints_one_line_per_event_of_its_own_and_no_library_chatter(tmp_path):
    result = run_train(tmp_path / "outputs", *RUN)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = (result.stdout + result.stderr).splitlines()
    for noise in CHATTER:
        assert not [line for line in lines if noise in line], noise
    events = [
        " ".join(found.groups()) if (found := LOG.match(line)) else line
        for line in lines
        if not TABLE.match(line) and not PROGRESS.match(line)
    ]
    assert sorted(events) == sorted(
        [
            "transformer_lab.job.run INFO outputs",
            "transformer_lab.job.run INFO tensorboard",
            "transformer_lab.callbacks.model_summary INFO model",
            "transformer_lab.callbacks.norm_comparison INFO gradient",
            "`Trainer.fit` stopped: `max_steps=20` reached.",  # Lightning's: where it ended
            "transformer_lab.job.run INFO metrics",
        ]
    )
    assert len([line for line in lines if PROGRESS.match(line)]) <= 2  # training, testing
