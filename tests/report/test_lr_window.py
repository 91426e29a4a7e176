"""The learning-rate window in the sweep report, on a hand-made sweep whose numbers are known:
norm post/pre x lr 1e-4, 1e-3, 1e-2 x schedule constant/linear_warmup, with diverged runs
and a failed job."""

import json
import warnings

import numpy as np
import pytest
from matplotlib.image import imread
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from torch.utils.tensorboard import SummaryWriter

from transformer_lab.report import main
from transformer_lab.report.lr_window import COLOURS, _cell_text, best_lr_table
from transformer_lab.report.progress import Progress
from transformer_lab.report.sweep import load_sweep

from .conftest import started_job

BY_SEQUENCE = Progress("val/seq_acc", 0.9)  # the default
DIVERGED = "diverged"
FAILED = "failed"
# (norm, lr, schedule, seed) -> final val/seq_acc, DIVERGED or FAILED
RESULTS = {
    ("post", "1e-4", "constant", 0): 0.5,
    ("post", "1e-3", "constant", 0): 0.95,
    ("post", "1e-3", "constant", 1): DIVERGED,  # with seed 0: scores (0.95 + 0) / 2 < 0.5
    ("post", "1e-2", "constant", 0): DIVERGED,
    ("post", "1e-4", "linear_warmup", 0): 0.3,
    ("post", "1e-3", "linear_warmup", 0): 0.97,
    ("post", "1e-2", "linear_warmup", 0): 0.92,
    ("pre", "1e-4", "constant", 0): 0.5,
    ("pre", "1e-3", "constant", 0): 0.99,
    ("pre", "1e-2", "constant", 0): FAILED,
    ("pre", "1e-4", "linear_warmup", 0): 0.4,
    ("pre", "1e-3", "linear_warmup", 0): 0.98,
    ("pre", "1e-2", "linear_warmup", 0): 0.96,
}


def make_job(sweep, norm, lr, schedule, seed, result) -> None:
    """A job folder as the CLI leaves it: overrides, then metrics.json and the val/seq_acc
    curve (half the final value at step 49, the final one at step 99), or failed.json."""
    overrides = {"model.norm": norm, "optim.lr": lr, "optim.schedule": schedule, "seed": seed}
    job = sweep / ",".join(f"{k}={v}" for k, v in overrides.items())
    (job / ".hydra").mkdir(parents=True)
    (job / ".hydra" / "overrides.yaml").write_text(
        "".join(f"- {k}={v}\n" for k, v in overrides.items())
    )
    (job / ".hydra" / "config.yaml").write_text("{}\n")
    if result == FAILED:
        (job / "failed.json").write_text(json.dumps({"error": "ConfigError", "message": "bad"}))
        return
    diverged = result == DIVERGED
    acc = 0.0 if diverged else result
    writer = SummaryWriter(str(job))
    for step, value in ((49, acc / 2), (99, acc)):
        writer.add_scalar("val/seq_acc", value, step)
    writer.close()
    metrics = {
        "val/seq_acc": acc,
        "val/loss": 1.0 - acc,
        "train_seconds": 1.0,
        "diverged": diverged,
        "diverged_at_step": 60 if diverged else None,
    }
    (job / "metrics.json").write_text(json.dumps(metrics))


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lr_sweep")
    for (norm, lr, schedule, seed), result in RESULTS.items():
        make_job(folder, norm, lr, schedule, seed, result)
    return folder


def rows(table: str) -> list[list[str]]:
    lines = [line for line in table.splitlines() if line.startswith("| ")][2:]
    return [[c.strip() for c in line.strip("| ").split(" | ")] for line in lines]


def test_the_best_lr_counts_a_diverged_run_as_not_trained(sweep):
    table = best_lr_table(load_sweep(sweep), BY_SEQUENCE)
    assert [row[:4] for row in rows(table)] == [
        # norm, schedule, best lr, diverged runs at the best lr
        ["post", "constant", "0.0001", "0/1"],  # 0.5 beats 1e-3's (0.95 + diverged 0) / 2
        ["post", "linear_warmup", "0.001", "0/1"],
        ["pre", "constant", "0.001", "0/1"],
        ["pre", "linear_warmup", "0.001", "0/1"],
    ]


def test_the_best_lr_row_holds_its_metrics_and_the_window_where_every_run_trains(sweep):
    table = best_lr_table(load_sweep(sweep), BY_SEQUENCE)
    header = [c.strip() for c in table.splitlines()[0].strip("| ").split(" | ")]
    assert header[4:] == [
        "val/seq_acc",
        "val/loss",
        "median steps to val/seq_acc ≥ 0.9 (reached)",
        "trains (every run ≥ 0.9) at optim.lr",
        "largest optim.lr that trains, per seed",
    ]
    post_constant, post_warmup, pre_constant, pre_warmup = rows(table)
    # 1e-3 diverged once; never reached: beyond the run's end (its last validation, 99)
    assert post_constant[4:8] == ["0.500 n=1", "0.5000 n=1", "> 100 (0/1)", "none"]
    assert post_warmup[4:8] == ["0.970 n=1", "0.0300 n=1", "99 (1/1)", "0.001, 0.01"]
    assert pre_constant[4:8] == ["0.990 n=1", "0.0100 n=1", "99 (1/1)", "0.001"]  # 1e-2 failed
    assert pre_warmup[6:8] == ["99 (1/1)", "0.001, 0.01"]


def test_each_seed_has_its_own_largest_stable_rate_the_window_edge_with_its_spread(sweep):
    post_constant, post_warmup, pre_constant, pre_warmup = rows(
        best_lr_table(load_sweep(sweep), BY_SEQUENCE)
    )
    # seed 0 of post/constant learned at 1e-3 (0.95), diverged at 1e-2; seed 1 only diverged
    assert post_constant[8] == "0: 0.001, 1: none"
    assert post_warmup[8] == "0: 0.01"
    assert pre_constant[8] == "0: 0.001"  # 1e-2 failed: not stable
    assert pre_warmup[8] == "0: 0.01"


def test_a_stalled_run_with_a_low_loss_is_not_stable(tmp_path):
    for lr, acc in (("1e-3", 0.95), ("2e-3", 0.0)):  # 2e-3: stalled, val/loss 1.0 < ln 14 / 2
        make_job(tmp_path, "post", lr, "constant", 0, acc)
    (row,) = rows(best_lr_table(load_sweep(tmp_path), BY_SEQUENCE))
    assert row[-2:] == ["0.001", "0: 0.001"]


def test_a_seed_still_running_is_not_read_as_one_that_never_trains(tmp_path):
    make_job(tmp_path, "post", "1e-3", "constant", 0, 0.95)
    make_job(tmp_path, "post", "2e-3", "constant", 0, 0.0)
    running = {"model.norm": "post", "optim.lr": "1e-3", "optim.schedule": "constant", "seed": 1}
    started_job(tmp_path, running)  # no metrics.json yet
    sweep = load_sweep(tmp_path)
    (row,) = rows(best_lr_table(sweep, BY_SEQUENCE))
    assert row[-1] == "0: 0.001"  # not "0: 0.001, 1: none"
    unfinished = [r for r in sweep.runs if r.overrides["seed"] == "1"]
    assert _cell_text(unfinished, BY_SEQUENCE) == (None, "unfinished", None)  # not "failed"


def test_rates_that_share_the_highest_mean_are_a_tie_and_none_is_best(tmp_path):
    # the README's worked sweep: 20 steps learn no sequence at either rate
    for lr in ("1e-2", "1e-4"):
        for seed in range(3):
            make_job(tmp_path, "post", lr, "constant", seed, 0.0)
    make_job(tmp_path, "post", "1e-3", "constant", 0, 0.0004)  # 0.000 as the table shows it
    make_job(tmp_path, "post", "1e-3", "constant", 1, 0.0)
    (row,) = rows(best_lr_table(load_sweep(tmp_path), BY_SEQUENCE))
    assert row[:5] == ["tie: 0.0001, 0.001, 0.01 (val/seq_acc 0.000 each)", "—", "—", "—", "—"]
    make_job(tmp_path, "post", "1e-3", "constant", 2, 0.6)  # now one is higher
    (row,) = rows(best_lr_table(load_sweep(tmp_path), BY_SEQUENCE))
    assert row[0] == "0.001"


def test_cells_name_diverged_failed_and_never_reached_instead_of_a_value(sweep):
    runs = load_sweep(sweep).runs

    def cell(norm, lr, schedule):
        keys = ("model.norm", "optim.lr", "optim.schedule")
        mine = [r for r in runs if tuple(r.overrides[k] for k in keys) == (norm, lr, schedule)]
        return _cell_text(mine, BY_SEQUENCE)

    assert cell("post", "1e-2", "constant") == (None, "diverged", None)
    assert cell("pre", "1e-2", "constant") == (None, "failed", None)
    assert cell("post", "1e-4", "linear_warmup") == (0.3, "0.30\n< 0.9", "///")
    assert cell("post", "1e-3", "constant") == (0.95, "0.95\n1/2 div.", None)
    assert cell("pre", "1e-3", "linear_warmup") == (0.98, "0.98", None)


def test_the_report_has_the_window_section_and_a_heatmap_per_norm(sweep):
    assert main([str(sweep)]) == 0
    report = (sweep / "report.md").read_text()
    section = report.split("## Learning-rate window")[1].split("\n## ")[0]
    assert best_lr_table(load_sweep(sweep), BY_SEQUENCE) in section
    assert "![" in section and "(lr_window.png)" in section
    image = imread(sweep / "lr_window.png")[..., :3]

    def has(rgb) -> bool:
        return bool((np.abs(image - np.array(rgb[:3])).max(axis=-1) < 0.02).any())

    assert has(COLOURS.to_rgba(0.99))  # pre, 1e-3, constant
    assert has(COLOURS.to_rgba(0.3))  # post, 1e-4, warmup (hatched, but its colour shows)
    assert has((0.827, 0.827, 0.827))  # lightgrey: a diverged cell
    height, width = image.shape[:2]
    assert width > 1.5 * height  # two panels side by side: post and pre
    events = EventAccumulator(str(sweep / "report"))
    events.Reload()
    assert "report/lr_window" in events.Tags()["images"]  # in TensorBoard's run "report" too


def test_a_sweep_that_keeps_the_lr_fixed_has_no_window(tmp_path):
    for norm in ("post", "pre"):
        make_job(tmp_path, norm, "1e-3", "constant", 0, 0.9)
    assert best_lr_table(load_sweep(tmp_path), BY_SEQUENCE) is None
    assert main([str(tmp_path)]) == 0
    assert "Learning-rate window" not in (tmp_path / "report.md").read_text()


def test_a_grid_of_many_configurations_wraps_its_panels_in_rows(tmp_path):
    """experiment=regime's 27 configurations drew 27 panels in one row, their titles over
    each other; past six a row, the panels wrap."""
    for norm in range(8):
        make_job(tmp_path, f"norm{norm}", "1e-3", "constant", 0, 0.9)
        make_job(tmp_path, f"norm{norm}", "1e-2", "constant", 0, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main([str(tmp_path)]) == 0
    height, width = imread(tmp_path / "lr_window.png").shape[:2]
    assert 2 * height < width < 4 * height  # two rows of six places; in one row, 5 x as wide
