"""One tiny real sweep through the command line, shared by the report tests: two learning
rates x two seeds, where the huge learning rate diverges; sources of 3-10 words, and a
test_long split of 11-12; and :func:`hand_made_job`, for sweeps whose numbers are known."""

import json
import subprocess
import sys

import pytest
from torch.utils.tensorboard import SummaryWriter

TINY = [
    "experiment=smoke",
    "trainer.max_steps=8",
    "trainer.val_check_interval=4",
    "model.schedule=constant",
    "~callbacks.progress_bar",
    "~callbacks.attention_maps",
    "data.test_long_size=32",
    "data.test_long_max_len=12",
]
SWEEP = ["model.lr=1e-3,1e3", "seed=0,1"]


@pytest.fixture(scope="package")
def tiny_sweep(tmp_path_factory, one_thread_env):
    """``(completed process, sweep folder)`` of ``-m model.lr=1e-3,1e3 seed=0,1``."""
    root = tmp_path_factory.mktemp("tiny_sweep")
    command = [
        sys.executable,
        "-m",
        "transformer_lab.train",
        "-m",
        *SWEEP,
        *TINY,
        f"paths.outputs_root={root}",
    ]
    result = subprocess.run(
        command, cwd=root, capture_output=True, text=True, env=one_thread_env, timeout=600
    )
    (sweep,) = (root / "multirun").iterdir()
    return result, sweep


def hand_made_job(sweep, overrides: dict, metrics: dict, curves: dict | None = None, config=""):
    """A finished job folder as the CLI leaves it, with just the files the report reads:
    ``.hydra/overrides.yaml``, ``metrics.json``, the TensorBoard ``curves``
    ``{tag: [(step, value), ...]}`` and ``config_resolved.yaml`` (``config``, YAML)."""
    job = sweep / ",".join(f"{k}={v}" for k, v in overrides.items()).replace("/", ".")
    (job / ".hydra").mkdir(parents=True)
    (job / ".hydra" / "overrides.yaml").write_text(
        "".join(f"- {k}={v}\n" for k, v in overrides.items())
    )
    (job / "metrics.json").write_text(json.dumps({"train_seconds": 1.0, **metrics}))
    if config:
        (job / "config_resolved.yaml").write_text(config)
    if curves:
        with SummaryWriter(str(job)) as writer:
            for tag, points in curves.items():
                for step, value in points:
                    writer.add_scalar(tag, value, step)
    return job
