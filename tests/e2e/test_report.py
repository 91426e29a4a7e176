"""The sweep report on a tiny real sweep (two learning rates x two seeds, see conftest)."""

import json
import shutil
import statistics

import pytest
from scipy import stats

from transformer_lab.report import main, write_report
from transformer_lab.report.sweep import load_sweep

pytestmark = pytest.mark.slow  # the shared sweep takes ~15 s


def table(report: str) -> tuple[list[str], list[list[str]]]:
    """The header and the body rows of the final-metrics table, as cells."""
    lines = report.split("## Final metrics")[1].split("\n## ")[0].splitlines()
    cells = [
        [c.strip() for c in line.strip("| ").split(" | ")]
        for line in lines
        if line.startswith("| ")
    ]
    return cells[0], cells[2:]


def table_rows(report: str) -> list[list[str]]:
    return table(report)[1]


@pytest.fixture(scope="module")
def report(tiny_sweep) -> str:
    _, sweep = tiny_sweep
    assert main([str(sweep)]) == 0
    return (sweep / "report.md").read_text()


def test_the_report_is_printed_and_its_path_named(tiny_sweep, capsys):
    _, sweep = tiny_sweep
    assert main([str(sweep)]) == 0
    report = (sweep / "report.md").read_text()
    assert capsys.readouterr().out == f"{report}\nreport: {sweep / 'report.md'}\n"


def test_the_report_has_one_row_per_configuration_and_its_figures(tiny_sweep, report):
    _, sweep = tiny_sweep
    rows = table_rows(report)
    assert [(row[0], row[1]) for row in rows] == [("0.001", "2"), ("1000.0", "2")]  # lr, runs
    assert "configurations differ by `optim.lr`" in report
    for figure in ("val_loss.png", "accuracy_by_length.png", "grad_norm_by_layer.png"):
        assert (sweep / figure).stat().st_size > 1000
        assert f"({figure})" in report


def test_final_metrics_are_the_mean_and_t_interval_over_seeds_of_the_runs_metrics(
    tiny_sweep, report
):
    _, sweep = tiny_sweep
    runs = load_sweep(sweep).configurations()[("0.001",)]
    losses = [r.metrics["val/loss"] for r in runs]
    mean = statistics.fmean(losses)
    low, high = stats.t.interval(0.95, len(losses) - 1, loc=mean, scale=stats.sem(losses))
    expected = f"{mean:.4f} [{low:.4f}, {high:.4f}] n=2"
    header, rows = table(report)
    assert rows[0][header.index("val/loss")] == expected


def test_length_generalization_is_the_mean_over_seeds_at_each_test_long_length(tiny_sweep, report):
    _, sweep = tiny_sweep
    runs = load_sweep(sweep).configurations()[("0.001",)]
    section = report.split("## Length generalization")[1].split("\n## ")[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    assert rows[0] == "| optim.lr | 11 words | 12 words |"
    expected = [
        f"{statistics.fmean(r.metrics[f'test_long/seq_acc_by_len/{n}'] for r in runs):.3f}"
        for n in (11, 12)
    ]
    assert rows[2:] == [f"| 0.001 | {' | '.join(expected)} |"]  # lr 1e3 diverged: no row


def test_diverged_runs_are_marked_with_their_steps_and_left_out_of_the_means(report):
    low, huge = table_rows(report)
    assert huge[2] == "0/2 [0.000, 0.842]"  # learned: a diverged run did not
    assert low[3] == "0/2"
    assert huge[3].startswith("**2/2** (step ")
    assert huge[4] == "—"  # val/loss: no run to average


def test_steps_to_target_are_the_first_validation_reaching_it(tiny_sweep):
    _, sweep = tiny_sweep
    assert main([str(sweep), "--target", "0"]) == 0
    first_val_step = load_sweep(sweep).finished[0].scalars["val/seq_acc"][0][0]
    low = table_rows((sweep / "report.md").read_text())[0]
    assert low[-2] == f"{first_val_step} (2/2)"  # both seeds validate at the same steps
    assert main([str(sweep)]) == 0  # leave the default report for the other tests


def test_a_partial_sweep_is_still_reported_and_lists_its_unfinished_jobs(tiny_sweep, tmp_path):
    _, sweep = tiny_sweep
    partial = shutil.copytree(sweep, tmp_path / "partial")
    configurations = load_sweep(partial).configurations()
    running, failed = configurations[("0.001",)][0].path, configurations[("1000.0",)][0].path
    (running / "metrics.json").unlink()
    (failed / "metrics.json").unlink()
    (failed / "failed.json").write_text(json.dumps({"error": "RuntimeError", "message": "boom"}))
    assert main([str(partial)]) == 0
    report = (partial / "report.md").read_text()
    assert [(row[0], row[1]) for row in table_rows(report)] == [("0.001", "1"), ("1000.0", "1")]
    assert f"`{running.name}`: no metrics.json yet" in report
    assert f"`{failed.name}`: failed: RuntimeError: boom" in report


def test_a_folder_that_is_not_a_sweep_gets_a_clear_message(tiny_sweep, tmp_path, capsys):
    _, sweep = tiny_sweep
    assert main([str(tmp_path)]) == 2
    assert "holds no job folders" in capsys.readouterr().err
    job = next(p for p in sweep.iterdir() if (p / ".hydra").is_dir())
    assert main([str(job)]) == 2
    assert "is a single run, not a sweep" in capsys.readouterr().err
    unfinished = shutil.copytree(sweep, tmp_path / "unfinished")
    for metrics in unfinished.glob("*/metrics.json"):
        metrics.unlink()
    assert main([str(unfinished)]) == 2
    assert "none of its 4 jobs has finished" in capsys.readouterr().err


def test_a_real_sweeps_report_has_the_section(tiny_sweep):
    _, sweep = tiny_sweep
    text = write_report(sweep).read_text()
    assert "## Code and versions" in text
    assert "Every job ran transformer_lab" in text
