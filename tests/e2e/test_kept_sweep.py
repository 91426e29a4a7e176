"""A sweep carried to another machine (``python -m transformer_lab.sweep.keep``): its kept
copy holds no weights, the report judges it as it judges the sweep, and copied back to the
sweep's folder on a machine that lost everything else, the same command runs no job again."""

import json
import shutil

import pytest

from ..command_line import python_module, run_command, run_command_here
from .test_sequential_sweep import command

pytestmark = pytest.mark.slow

ONE_LOOK = ["hydra.sweeper.first=3", "hydra.sweeper.budget=3"]  # 6 jobs, judged once


def test_a_kept_sweep_is_judged_alike_and_continues_where_it_was_kept(tmp_path):
    sweep, kept = tmp_path / "sweep", tmp_path / "kept"
    ran = run_command([*command(tmp_path), *ONE_LOOK], tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert len(list(sweep.glob("*/checkpoints/last.ckpt"))) == 6

    keep = run_command_here(
        python_module("transformer_lab.sweep.keep", str(sweep), str(kept)), tmp_path
    )
    assert keep.returncode == 0, keep.stderr
    assert f"{kept}: 6 finished jobs added, 6 kept in all" in keep.stdout
    assert not list(kept.rglob("checkpoints")) and not list(kept.rglob(".run.lock"))
    for job in sweep.glob("*/metrics.json"):
        assert (kept / job.parent.name / "metrics.json").read_bytes() == job.read_bytes()
        assert list((kept / job.parent.name).glob("events.out.tfevents.*"))
    assert {p.name for p in kept.iterdir() if p.is_file()} == {
        "multirun.yaml",
        "sweep.json",
        "sequential.json",
    }

    verdicts = {}
    for folder in (sweep, kept):
        report = run_command_here(python_module("transformer_lab.report", str(folder)), tmp_path)
        assert report.returncode == 0, report.stderr
        judged = json.loads((folder / "report.json").read_text())["hypotheses"]
        verdicts[folder] = [(h["id"], h["verdict"], h["p"], h["a"], h["b"]) for h in judged]
    assert verdicts[kept] == verdicts[sweep] and len(verdicts[sweep]) == 1

    shutil.rmtree(sweep)  # the next machine has only what was kept
    shutil.copytree(kept, sweep)
    ended = {p: p.stat().st_mtime_ns for p in sweep.glob("*/metrics.json")}
    again = run_command([*command(tmp_path), *ONE_LOOK], tmp_path)
    assert again.returncode == 0, again.stderr
    assert "stage of 3 seeds: 2 configurations, 0 jobs to run" in again.stdout + again.stderr
    assert {p: p.stat().st_mtime_ns for p in sweep.glob("*/metrics.json")} == ended
    assert not list(sweep.rglob("checkpoints"))  # no job started over
