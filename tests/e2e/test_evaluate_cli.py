"""``python -m transformer_lab.evaluate`` on the command line: a sweep job's folder is
evaluated from the checkpoint alone, and a bad path is one error line, exit 2."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from transformer_lab.evaluate import evaluate

from ..command_line import python_module, run_command
from ..conftest import eval_config


def evaluate_on_the_command_line(cwd: Path, *arguments: str) -> subprocess.CompletedProcess:
    return run_command(python_module("transformer_lab.evaluate", *arguments), cwd)


@pytest.mark.slow
def test_the_command_line_evaluates_a_sweep_job_folder_and_reports_errors_in_one_line(
    untrained_checkpoint, tmp_path
):
    path, _ = untrained_checkpoint
    job = tmp_path / "model.norm=pre,seed=1"  # a sweep job's folder name: '=' and ','
    (job / ".hydra").mkdir(parents=True)
    (job / "checkpoints").mkdir()
    shutil.copy(path, job / "checkpoints" / "last.ckpt")
    empty = tmp_path / "experiment=x,model.pos_encoding=rotary"
    empty.mkdir()
    settings = ["beam_size=2", "samples=1", "data.test_size=16"]
    done = evaluate_on_the_command_line(tmp_path, f"ckpt_path={job}", *settings)
    failed = evaluate_on_the_command_line(tmp_path, f"ckpt_path={empty}")
    assert sorted(tmp_path.iterdir()) == sorted([path, job, empty])  # nothing in the cwd

    assert done.returncode == 0, done.stderr
    written = job / "eval_test_size=16.json"
    assert f"wrote {written}" in done.stdout.splitlines()
    assert "sample generations (test split)" in done.stdout
    results = json.loads(written.read_text())
    assert results["checkpoint"] == str(job / "checkpoints" / "last.ckpt")
    assert (results["global_step"], results["data"]) == (7, {"test_size": 16})
    assert results["greedy"]["test/loss"] > 2.0  # untrained: about ln(16) nats a token
    same = evaluate(eval_config(ckpt_path=path, samples=0, beam_size=2, **{"data.test_size": 16}))
    for decoding in ("greedy", "beam"):
        assert results[decoding] == pytest.approx(same[decoding], rel=1e-6), decoding

    assert failed.returncode == 2
    assert failed.stderr.strip() == (
        f"error: ckpt_path: {empty}/checkpoints/last.ckpt does not exist; give a checkpoint "
        "file or a run folder that holds checkpoints/last.ckpt"
    )
    assert list(empty.iterdir()) == []
