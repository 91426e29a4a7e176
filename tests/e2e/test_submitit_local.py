"""Cluster sweeps go through Hydra's submitit launcher; submitit_local runs here."""

import json

import pytest

from ..command_line import run_train

TINY = [
    "experiment=smoke",
    "trainer.max_steps=4",
    "trainer.val_check_interval=2",
    "~callbacks.progress_bar",
]


@pytest.mark.slow
def test_submitit_local_runs_a_two_job_sweep_into_named_folders(tmp_path):
    outputs = tmp_path / "outputs"
    submitit = ["-m", "hydra/launcher=submitit_local", "hydra.launcher.timeout_min=10"]
    result = run_train(outputs, *submitit, "model/norm=post,pre", *TINY)
    assert result.returncode == 0, result.stderr[-3000:]
    (sweep,) = (outputs / "multirun").iterdir()
    runs = sorted(p for p in sweep.iterdir() if (p / ".hydra").is_dir())
    assert [("model.norm=post" in r.name, "model.norm=pre" in r.name) for r in runs] == [
        (True, False),
        (False, True),
    ]
    for run in runs:
        assert json.loads((run / "metrics.json").read_text())["global_step"] == 4
    assert json.loads((sweep / "summary.json").read_text())["finished"] == 2
