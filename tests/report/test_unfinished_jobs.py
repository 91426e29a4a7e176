"""The report's *Not finished* section names each failed job with its reason and the first
20 jobs still to finish; a grid paused early (experiment=regime: 271 folders without
metrics.json) reads as a count, not 271 lines before the figures."""

import csv
import json

from transformer_lab.report import main

from .conftest import hand_made_job, started_job


def started_job_of(sweep, seed: int, failed: bool = False) -> None:
    """A post-norm job started with ``seed``; ``failed.json`` for one that failed."""
    job = started_job(sweep, {"model.norm": "post", "seed": seed})
    if failed:
        failure = {"error": "InvalidSetting", "message": "optim.lr=-1: out of range"}
        (job / "failed.json").write_text(json.dumps(failure))


def test_a_long_list_of_unfinished_jobs_names_the_first_20_and_counts_the_rest(tmp_path):
    for seed in range(2):
        hand_made_job(tmp_path, {"model.norm": "pre", "seed": seed}, {"val/seq_acc": 0.9})
    started_job_of(tmp_path, 99, failed=True)
    for seed in range(25):
        started_job_of(tmp_path, seed)
    assert main([str(tmp_path)]) == 0
    section = (tmp_path / "report.md").read_text().split("## Not finished\n")[1]
    lines = section.split("\n## ")[0].strip().splitlines()
    assert lines[0] == (
        "- `model.norm=post,seed=99`: failed: InvalidSetting: optim.lr=-1: out of range"
    )
    waiting = [line for line in lines if "no metrics.json yet" in line]
    assert len(waiting) == 20
    assert lines[-1] == (
        "- and 5 more jobs without metrics.json (`runs.csv` lists every job, `status` unfinished)"
    )
    assert len(lines) == 22
    with open(tmp_path / "runs.csv", newline="") as table:
        statuses = [row["status"] for row in csv.DictReader(table)]
    assert statuses.count("unfinished") == 25 and statuses.count("failed") == 1
