"""A sweep whose configurations ran once each, one validation per run and no test_long
split: the report says each configuration ran once, draws the one validation as a dot and
names only the test split it has."""

import numpy as np
import pytest
from matplotlib.colors import to_rgb

from transformer_lab.callbacks.plotting import to_image
from transformer_lab.report import figures, main
from transformer_lab.report.lengths import accuracy_by_length_figure
from transformer_lab.report.sweep import load_sweep

from .conftest import hand_made_job


def one_run_each(folder, seeds=(0,), long: bool = False):
    """``model.norm`` post and pre, a run per seed, each with one validation (step 9)."""
    for i, norm in enumerate(("post", "pre")):
        for seed in seeds:
            metrics = {"val/loss": 2.0 - i, "test/seq_acc_by_len/3": 0.5}
            if long:
                metrics["test_long/seq_acc_by_len/12"] = 0.25
            curves = {"val/loss": [(9, 2.0 - i + seed / 10)]}
            hand_made_job(folder, {"model/norm": norm, "seed": seed}, metrics, curves)
    return folder


def report_of(folder) -> str:
    assert main([str(folder)]) == 0
    return (folder / "report.md").read_text()


def test_a_sweep_of_one_run_per_configuration_says_so(tmp_path):
    report = report_of(one_run_each(tmp_path))
    said = "configurations differ by `model.norm`; each configuration ran once, so there is no "
    assert said + "spread over `seed`." in report
    assert "differ by `seed`" not in report


def test_a_sweep_of_seeds_says_its_runs_differ_by_the_replicate_key(tmp_path):
    report = report_of(one_run_each(tmp_path, seeds=(0, 1)))
    assert "runs of one configuration differ by `seed` (the replicate key)." in report
    assert "ran once" not in report


def test_a_run_of_one_validation_is_drawn_as_a_dot(tmp_path, monkeypatch):
    drawn = []
    monkeypatch.setattr(figures, "save_png", lambda figure, path: drawn.append(figure))
    figures.val_loss_curves(load_sweep(one_run_each(tmp_path)), tmp_path)
    [figure] = drawn
    image = to_image(figure).astype(float) / 255  # [H, W, 3]; draws, so transData is final
    [axes] = [ax for ax in figure.axes if ax.lines]
    assert len(axes.lines) == 2  # post and pre, one point each
    for line in axes.lines:
        (x,), (y,) = line.get_data()
        column, row = axes.transData.transform((x, y))
        pixel = image[image.shape[0] - round(row), round(column)]
        expected = 0.8 * np.array(to_rgb(line.get_color())) + 0.2  # alpha 0.8 over white
        assert np.abs(pixel - expected).max() < 0.1, (line.get_color(), pixel)


SPLITS_NAMED = [(False, "test split"), (True, "test and test_long splits")]


@pytest.mark.parametrize(("long", "splits"), SPLITS_NAMED)
def test_the_accuracy_by_length_caption_names_the_splits_the_runs_had(tmp_path, long, splits):
    [(caption, _)] = accuracy_by_length_figure(
        load_sweep(one_run_each(tmp_path, long=long)), tmp_path
    )
    assert f"against source length, {splits}, mean over" in caption
