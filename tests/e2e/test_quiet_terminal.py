"""A run's terminal, counted: one line of ours per event of the job, its progress bars and
its two tables, and none of the libraries' chatter (console.py says what is dropped and
why). The run is your-data.md's cipher run (tests/docs: built once for the docs' blocks),
a process with the default callbacks and loggers on a file of pairs whose epochs are
shorter than Lightning's logging interval, one of the notices it used to print."""

import re

import pytest

from ..built_once import built_once
from ..docs.examples import Runs

pytestmark = pytest.mark.slow  # a real 300-step run in a process, shared with tests/docs

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
    "\x1b[",
)


def test_a_run_prints_one_line_per_event_of_its_own_and_no_library_chatter(tmp_path_factory):
    runs = Runs(
        tmp_path_factory.getbasetemp(), lambda n, make: built_once(tmp_path_factory, n, make)[1]
    )
    lines = runs.cipher()["printed"].split("\n")
    for noise in CHATTER:
        assert not [line for line in lines if noise in line], noise
    events = [
        " ".join(found.groups()) if (found := LOG.match(line)) else line
        for line in lines
        if line.strip() and not TABLE.match(line) and not PROGRESS.match(line)
    ]
    assert sorted(events) == sorted(
        [
            "transformer_lab.job.run INFO outputs",
            "transformer_lab.job.run INFO tensorboard",
            "transformer_lab.job.run INFO tokenizer",
            "transformer_lab.callbacks.model_summary INFO model",
            "transformer_lab.callbacks.norm_comparison INFO gradient",
            "`Trainer.fit` stopped: `max_steps=300` reached.",  # Lightning's: where it ended
            "transformer_lab.job.run INFO metrics",
        ]
    )
    assert len([line for line in lines if PROGRESS.match(line)]) <= 2  # training, testing
