"""Length generalization in the sweep report, on hand-made sweeps whose numbers are known."""

import json
import warnings

import numpy as np
from matplotlib.colors import to_rgb
from matplotlib.image import imread

from transformer_lab.report import main
from transformer_lab.report.lengths import (
    accuracy_by_length,
    configuration_curves,
    length_table,
    longest_trained,
    plot_accuracy_by_length,
)
from transformer_lab.report.sweep import load_sweep


def fake_run(sweep, overrides: dict[str, str], metrics: dict, max_task_len: int = 10) -> None:
    """A finished job folder as the CLI leaves it, with just the files the report reads."""
    run = sweep / ",".join(f"{k}={v}" for k, v in overrides.items()).replace("/", ".")
    (run / ".hydra").mkdir(parents=True)
    (run / ".hydra" / "overrides.yaml").write_text(
        "".join(f"- {k}={v}\n" for k, v in overrides.items())
    )
    (run / ".hydra" / "config.yaml").write_text("{}\n")
    (run / "metrics.json").write_text(json.dumps({"train_seconds": 1.0, **metrics}))
    (run / "config_resolved.yaml").write_text(
        f"data:\n  task: reverse\n  max_task_len: {max_task_len}\n"
    )


def has_colour(image, colour: str) -> bool:
    """Whether some pixel of the RGB(A) float ``image`` is matplotlib's ``colour``."""
    rgb = np.array(to_rgb(colour))
    return bool((np.abs(image[..., :3] - rgb).max(axis=-1) < 0.02).any())


def by_len(split: str, accuracies: dict[int, float]) -> dict[str, float]:
    return {f"{split}/seq_acc_by_len/{n}": a for n, a in accuracies.items()}


def test_accuracy_by_length_joins_test_and_test_long_in_length_order():
    metrics = {
        "test/seq_acc": 0.9,
        "test/seq_acc_by_len/10": 0.8,
        "test/seq_acc_by_len/3": 1.0,
        "test_long/seq_acc_by_len/11": 0.25,
        "val/seq_acc_by_len/3": 0.5,  # not a test split
        "test_long/token_acc": 0.7,
    }
    assert list(accuracy_by_length(metrics).items()) == [(3, 1.0), (10, 0.8), (11, 0.25)]
    assert accuracy_by_length(metrics, ("test_long",)) == {11: 0.25}


def test_curves_average_seeds_at_shared_lengths_and_leave_out_diverged_runs(tmp_path):
    for seed, long_acc in enumerate([0.5, 0.25]):
        fake_run(
            tmp_path,
            {"model/pos_encoding": "alibi", "seed": str(seed)},
            by_len("test", {10: 1.0}) | by_len("test_long", {11: long_acc, 12: 0.0}),
        )
    fake_run(
        tmp_path,
        {"model/pos_encoding": "alibi", "seed": "2"},  # missed length 12
        by_len("test", {10: 0.5}) | by_len("test_long", {11: 0.0}),
    )
    fake_run(
        tmp_path,
        {"model/pos_encoding": "rotary", "seed": "0"},
        by_len("test", {10: 1.0}) | by_len("test_long", {11: 0.125, 12: 0.0}),
    )
    fake_run(
        tmp_path,
        {"model/pos_encoding": "rotary", "seed": "1"},
        {"diverged": True} | by_len("test", {10: 0.0}) | by_len("test_long", {11: 1.0}),
    )
    sweep = load_sweep(tmp_path)
    assert configuration_curves(sweep) == {
        ("alibi",): {10: 2.5 / 3, 11: 0.25},
        ("rotary",): {10: 1.0, 11: 0.125, 12: 0.0},
    }
    assert longest_trained(sweep) == 10
    assert length_table(sweep).splitlines() == [
        "| model.pos_encoding | 11 words | 12 words |",
        "| --- | --- | --- |",
        "| alibi | 0.250 | — |",
        "| rotary | 0.125 | 0.000 |",
    ]


def test_the_report_shows_the_length_table_and_one_line_per_configuration(tmp_path):
    for i, encoding in enumerate(["alibi", "rotary"]):
        fake_run(
            tmp_path,
            {"model/pos_encoding": encoding},
            by_len("test", {10: 1.0}) | by_len("test_long", {11: 0.75 - i / 4}),
        )
    assert main([str(tmp_path)]) == 0
    report = (tmp_path / "report.md").read_text()
    assert "## Length generalization" in report
    assert "| rotary | 0.500 |" in report
    assert "](accuracy_by_length.png)" in report
    image = imread(tmp_path / "accuracy_by_length.png")
    assert image.shape[:2] == (320, 560)  # 7 x 4 inches at 80 dpi
    drawn = [has_colour(image, f"C{i}") for i in range(3)]
    assert drawn == [True, True, False]  # one line per configuration, no third


def test_without_test_long_the_figure_shows_the_training_lengths_and_no_table(tmp_path):
    fake_run(tmp_path, {"model/norm": "pre"}, by_len("test", {3: 1.0, 10: 0.5}))
    fake_run(tmp_path, {"model/norm": "post"}, by_len("test", {3: 1.0, 10: 0.25}))
    assert main([str(tmp_path)]) == 0
    report = (tmp_path / "report.md").read_text()
    assert "## Length generalization" not in report
    assert "](accuracy_by_length.png)" in report
    assert length_table(load_sweep(tmp_path)) is None


def test_a_sweep_without_per_length_metrics_has_no_length_figure(tmp_path):
    fake_run(tmp_path, {"model/norm": "pre"}, {"test/seq_acc": 1.0})
    fake_run(tmp_path, {"model/norm": "post"}, {"test/seq_acc": 0.5})
    assert main([str(tmp_path)]) == 0
    assert "accuracy_by_length" not in (tmp_path / "report.md").read_text()
    assert not (tmp_path / "accuracy_by_length.png").exists()


def test_a_grid_of_many_configurations_gets_its_legend_beside_the_axes(tmp_path):
    """108 configurations (experiment=regime's) in a legend inside the axes left the axes no
    room: matplotlib gave up its layout with a warning on every report of the grid."""
    curves = {
        f"{depth}, {lr}, recipe {r}": {4: 0.9, 5: 0.5}
        for depth in (6, 12, 18)
        for lr in ("1e-3", "2e-3", "4e-3", "1e-2")
        for r in range(9)
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plot_accuracy_by_length(curves, tmp_path / "many.png", 5, "depth, optim.lr, recipe")
    height, width = imread(tmp_path / "many.png").shape[:2]
    assert width > 2.5 * height  # the axes, then four columns of 30 entries
