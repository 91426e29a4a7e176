"""A sweep survives its diverging jobs: they end as results, the others complete."""

import json

import pytest

from transformer_lab.runs.reader import read_jobs

pytestmark = pytest.mark.slow  # the shared sweep takes ~15 s


def test_a_sweep_with_diverging_jobs_exits_0_and_completes_the_other_jobs(tiny_sweep):
    result, sweep = tiny_sweep
    assert result.returncode == 0, result.stderr[-3000:]
    jobs = read_jobs(sweep)
    assert len(jobs) == 4
    for job in jobs:
        huge = float(job.overrides["optim.lr"]) > 1
        assert job.metrics["diverged"] is huge
        if huge:
            assert job.metrics["diverged_at_step"] >= 0
            assert (job.path / "checkpoints" / "last_good.ckpt").is_file()
        else:
            assert job.metrics["global_step"] == 8
            assert 0.0 <= job.metrics["test/seq_acc"] <= 1.0
    assert "diverged at step" in result.stdout + result.stderr
    summary = json.loads((sweep / "summary.json").read_text())
    assert (summary["finished"], len(summary["diverged"]), summary["failed"]) == (4, 2, {})
