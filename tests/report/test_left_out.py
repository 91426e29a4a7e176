"""The report names every input it cannot trust, leaves it out of the statistics and counts
it: a metric that is not a number or is missing, a job without its config, a damaged
record, a job of other code; and it refuses to compare jobs that ran different arithmetic
unless told to."""

import json
import statistics

import pytest
from scipy import stats

from transformer_lab.report import main

from .conftest import hand_made_job

LOSSES = [2.10, 2.30, 2.20, 2.25]
ENVIRONMENT = {
    "transformer_lab": "0.1.0",
    "git_commit": "a" * 40,
    "git_dirty": False,
    "torch": "2.13.0+cpu",
    "cpu": "AMD EPYC 7B13",
    "torch_threads": 1,
    "gpus": [],
}


def make_sweep(folder, environments: list[dict] | None = None) -> list:
    """Four seeds of one configuration and four of another, ``val/loss`` from LOSSES."""
    jobs = []
    for lr in ("0.01", "0.001"):
        for seed, loss in enumerate(LOSSES):
            metrics = {"val/loss": loss + (lr == "0.001"), "val/seq_acc": 0.5, "diverged": False}
            job = hand_made_job(folder, {"optim.lr": lr, "seed": seed}, metrics)
            if environments:
                environment = environments[len(jobs) % len(environments)]
                (job / "environment.json").write_text(json.dumps(environment))
            jobs.append(job)
    return jobs


def report_of(folder, *options: str) -> str:
    assert main([str(folder), *options]) == 0
    return (folder / "report.md").read_text()


def section(report: str, title: str) -> str:
    return report.split(f"## {title}\n")[1].split("\n## ")[0]


def loss_cell(values: list[float]) -> str:
    mean = statistics.fmean(values)
    low, high = stats.t.interval(0.95, len(values) - 1, loc=mean, scale=stats.sem(values))
    return f"{mean:.4f} [{low:.4f}, {high:.4f}] n={len(values)}"


def test_a_nan_metric_is_named_and_left_out_of_that_metrics_cell(tmp_path):
    jobs = make_sweep(tmp_path)
    nan = json.loads((jobs[0] / "metrics.json").read_text()) | {"val/loss": float("nan")}
    (jobs[0] / "metrics.json").write_text(json.dumps(nan))  # JSON's NaN, as json.dumps writes
    report = report_of(tmp_path)
    assert "nan" not in section(report, "Final metrics")  # it printed `nan [0.0000, 0.0000]`
    assert f"- `val/loss` of `{jobs[0].name}`: nan in metrics.json, not a number" in report
    assert loss_cell(LOSSES[1:]) in report  # n=3: the other seeds of optim.lr=0.01
    assert "8 jobs, 8 finished;" in report  # the run stays, its other metrics too


def test_a_missing_metric_is_named(tmp_path):
    jobs = make_sweep(tmp_path)
    metrics = json.loads((jobs[1] / "metrics.json").read_text())
    del metrics["val/loss"]
    (jobs[1] / "metrics.json").write_text(json.dumps(metrics))
    report = report_of(tmp_path)
    assert (
        f"- `val/loss` of `{jobs[1].name}`: missing from metrics.json, which the other runs "
        "of its configuration have"
    ) in section(report, "Left out")


def test_a_job_without_its_config_is_named_and_not_counted_as_finished(tmp_path):
    jobs = make_sweep(tmp_path)
    (jobs[2] / ".hydra" / "config.yaml").unlink()
    report = report_of(tmp_path)
    assert "8 jobs, 7 finished, 1 left out (*Left out*);" in report
    assert f"- `{jobs[2].name}`: no .hydra/config.yaml: the config it ran with" in report
    assert loss_cell([LOSSES[0], LOSSES[1], LOSSES[3]]) in report


@pytest.mark.parametrize(
    ("name", "content", "why"),
    [
        ("metrics.json", b"", "metrics.json is empty (0 bytes): a write that did not finish"),
        ("failed.json", b"", "failed.json is empty (0 bytes): a write that did not finish"),
        ("metrics.json", b'{"val/loss": 2.1', "metrics.json is damaged (JSONDecodeError: "),
        ("metrics.json", b"\xff\xfe", "metrics.json is damaged (UnicodeDecodeError: "),
        (".hydra/config.yaml", b"a: [", ".hydra/config.yaml is damaged (ParserError: "),
        ("environment.json", b"[1, 2]", "environment.json is damaged (a list, not a dict)"),
    ],
    ids=["empty metrics", "empty failed", "half metrics", "binary", "bad yaml", "not a dict"],
)
def test_a_damaged_record_is_named_with_its_file_and_the_rest_reported(
    tmp_path, name, content, why
):
    jobs = make_sweep(tmp_path)
    (jobs[3] / name).write_bytes(content)
    report = report_of(tmp_path)  # exit 0: no JSONDecodeError, no traceback
    assert f"- `{jobs[3].name}`: {why}" in section(report, "Left out")
    assert "8 jobs, 7 finished, 1 left out" in report


def test_a_job_of_another_commit_is_left_out_unless_told_to_keep_it(tmp_path):
    other = ENVIRONMENT | {"git_commit": "b" * 40}
    jobs = make_sweep(tmp_path, [ENVIRONMENT] * 3 + [other])  # the 4th and 8th jobs
    report = report_of(tmp_path)
    assert (
        f"- `{jobs[3].name}`: ran transformer_lab 0.1.0, commit {'b' * 12}; the sweep's other "
        f"6 jobs ran transformer_lab 0.1.0, commit {'a' * 12}"
    ) in section(report, "Left out")
    assert "8 jobs, 6 finished, 2 left out" in report
    assert loss_cell(LOSSES[:3]) in report
    kept = report_of(tmp_path, "--allow-mixed-code")
    assert "**The jobs ran different code**, compared anyway (--allow-mixed-code)" in kept
    assert "## Left out" not in kept and loss_cell(LOSSES) in kept


def test_jobs_of_two_commits_with_the_same_code_are_one_sweep_and_other_code_is_left_out(tmp_path):
    """A commit that changes no code (the docs, a sweep's kept results) between two jobs
    leaves them one sweep: the code is git's tree of src/, not the commit."""
    code = ENVIRONMENT | {"git_code": "c" * 40}
    later_commit = code | {"git_commit": "b" * 40}
    jobs = make_sweep(tmp_path, [code, later_commit, code, later_commit])
    report = report_of(tmp_path)
    assert "## Left out" not in report and loss_cell(LOSSES) in report
    assert f"Every job ran transformer_lab 0.1.0, src/ tree {'c' * 12}." in report
    (jobs[3] / "environment.json").write_text(json.dumps(code | {"git_code": "d" * 40}))
    report = report_of(tmp_path)
    assert (
        f"- `{jobs[3].name}`: ran transformer_lab 0.1.0, src/ tree {'d' * 12}; the sweep's "
        f"other 7 jobs ran transformer_lab 0.1.0, src/ tree {'c' * 12}"
    ) in section(report, "Left out")


def test_a_job_of_other_uncommitted_changes_is_left_out_as_other_code(tmp_path):
    edited = ENVIRONMENT | {"git_code": "c" * 40, "git_dirty": True, "git_changes": "e" * 40}
    jobs = make_sweep(tmp_path, [edited] * 3 + [edited | {"git_changes": "f" * 40}])
    report = report_of(tmp_path)
    assert (
        f"- `{jobs[3].name}`: ran transformer_lab 0.1.0, src/ tree {'c' * 12} with changes "
        f"{'f' * 8}; the sweep's other 6 jobs ran transformer_lab 0.1.0, src/ tree {'c' * 12} "
        f"with changes {'e' * 8}"
    ) in section(report, "Left out")


def test_jobs_of_different_arithmetic_are_refused_in_one_line_unless_told_to(tmp_path, capsys):
    two = ENVIRONMENT | {"torch_threads": 2}
    make_sweep(tmp_path, [ENVIRONMENT, two])
    (tmp_path / "report.md").write_text("the earlier report")
    assert main([str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith(f"error: {tmp_path}: its jobs ran ")
    assert (
        "different arithmetic: torch_threads 1 (`optim.lr=0.001,seed=0`, "
        "`optim.lr=0.001,seed=2`, ... (4 jobs)) and 2 (`optim.lr=0.001,seed=1`, "
        "`optim.lr=0.001,seed=3`, ... (4 jobs)); a seed's numbers depend on it"
    ) in error
    assert "allowed: the jobs of one arithmetic" in error and "--allow-mixed-arithmetic" in error
    assert (tmp_path / "report.md").read_text() == "the earlier report"  # nothing lost
    report = report_of(tmp_path, "--allow-mixed-arithmetic")
    assert "**The jobs ran different arithmetic**, compared anyway" in report.split("## ")[0]


def test_a_run_resumed_on_another_processor_counts_as_mixed(tmp_path, capsys):
    moved = ENVIRONMENT | {"resumed": [ENVIRONMENT | {"cpu": "Intel Xeon Platinum 8375C"}]}
    make_sweep(tmp_path, [ENVIRONMENT] * 7 + [moved])
    assert main([str(tmp_path)]) == 2
    assert "cpu AMD EPYC 7B13 (" in capsys.readouterr().err
