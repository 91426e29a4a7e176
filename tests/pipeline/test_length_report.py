"""The length-generalization experiment: its config, and the table and figure of a sweep."""

import json
from pathlib import Path

import pytest
from matplotlib.image import imread
from omegaconf import OmegaConf

from transformer_lab.length_report import accuracy_by_length, main, plot_accuracy_by_length
from transformer_lab.train import build

ENCODINGS = ["sinusoidal", "learned", "rotary", "alibi", "none"]


def fake_run(sweep, name: str, pos_encoding: str, metrics: dict) -> None:
    run = sweep / name
    run.mkdir(parents=True)
    (run / "metrics.json").write_text(json.dumps(metrics))
    (run / "config_resolved.yaml").write_text(
        f"model:\n  pos_encoding: {pos_encoding}\ndata:\n  max_len: 10\n"
    )


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


def test_the_report_prints_a_row_per_encoding_and_draws_a_line_per_encoding(tmp_path, capsys):
    sweep = tmp_path / "sweep"
    for i, encoding in enumerate(["alibi", "rotary"]):
        fake_run(sweep, f"model.pos_encoding={encoding}", encoding, {
            "test/seq_acc": 1.0, "test_long/seq_acc": 0.5 - i / 4,
            "test/seq_acc_by_len/10": 1.0, "test_long/seq_acc_by_len/11": 0.75 - i / 4,
            "test_long/seq_acc_by_len/12": 0.25 - i / 4,
        })  # fmt: skip
    (sweep / "multirun.yaml").write_text("")  # files beside the runs are ignored
    main([str(sweep)])
    out = capsys.readouterr().out
    assert out.splitlines()[:4] == [
        "| positional encoding | test seq_acc | test_long seq_acc | 11 words | 12 words |",
        "|---|---:|---:|---:|---:|",
        "| alibi | 1.000 | 0.500 | 0.750 | 0.250 |",
        "| rotary | 1.000 | 0.250 | 0.500 | 0.000 |",
    ]
    assert f"figure: {sweep / 'accuracy_by_length.png'}" in out
    image = imread(sweep / "accuracy_by_length.png")
    assert image.shape[:2] == (320, 560)  # 7 x 4 inches at 80 dpi


def test_runs_sharing_an_encoding_are_labelled_by_their_folder(tmp_path, capsys):
    sweep = tmp_path / "sweep"
    for norm in ("post", "pre"):
        fake_run(sweep, f"model.norm={norm}", "rotary", {"test/seq_acc": 1.0})
    main([str(sweep)])
    rows = capsys.readouterr().out.splitlines()[2:4]
    assert [row.split(" | ")[0] for row in rows] == ["| model.norm=post", "| model.norm=pre"]


def test_a_folder_without_finished_runs_is_a_clear_error(tmp_path):
    with pytest.raises(SystemExit, match=r"no run folder with a metrics.json under"):
        main([str(tmp_path)])


def test_the_figure_draws_any_curves_to_a_png(tmp_path):
    path = plot_accuracy_by_length({"a": {3: 1.0, 11: 0.5}}, tmp_path / "f" / "x.png", 10)
    assert path.is_file() and imread(path).shape[:2] == (320, 560)


def test_pe_extrapolation_sweeps_every_encoding_and_tests_past_the_training_lengths(
    compose_train,
):
    conf = Path(__file__).resolve().parents[2] / "conf" / "experiment" / "pe_extrapolation.yaml"
    params = OmegaConf.load(conf).hydra.sweeper.params
    assert params["model/pos_encoding"].split(",") == ENCODINGS
    datamodule, module, _ = build(compose_train(["experiment=pe_extrapolation"]))
    assert datamodule.test_split_names == ["test", "test_long"]
    assert datamodule.test_long_max_len > datamodule.max_len
    assert module.hparams.max_len >= datamodule.max_seq_len  # the tables cover test_long
