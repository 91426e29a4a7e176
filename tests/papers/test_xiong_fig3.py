"""Xiong et al.'s Figure 3 on the lab's model: at 6+6 layers over 3 seeds, post-norm's FFN
W2 gradient at init grows toward the output and ends above pre-norm's, which is flat."""

import json

import pytest

from transformer_lab.papers import xiong_fig3
from transformer_lab.papers.__main__ import main


@pytest.fixture(scope="module")
def six():
    """6+6 layers and 2+2, 3 seeds, the gradient expected over 2 batches of 32."""
    return xiong_fig3.measure([2, 6], range(3), batches=2, batch_size=32, d_model=64)


def test_post_norm_last_layer_w2_gradient_exceeds_pre_norms_in_every_seed(six):
    for stack in xiong_fig3.STACKS:
        post, pre = six[6]["post"][stack], six[6]["pre"][stack]
        assert all(p[-1] > 1.5 * q[-1] for p, q in zip(post, pre, strict=True))


def test_post_norm_decoder_w2_gradient_grows_toward_the_output_and_pre_norms_is_flat(six):
    post = [c for c, _, _ in xiong_fig3.by_layer(six[6]["post"]["decoder"])]  # [layer 0..5]
    pre = [c for c, _, _ in xiong_fig3.by_layer(six[6]["pre"]["decoder"])]
    assert post == sorted(post) and post[-1] > 3 * post[0]
    assert 0.5 < pre[-1] / pre[0] < 1.2


def test_the_last_layer_against_depth_has_an_interval_around_its_centre(six):
    rows = xiong_fig3.last_layer(six, "pre")  # [(centre, low, high)] for depths 2, 6
    assert len(rows) == 2
    assert all(low < centre < high for centre, low, high in rows)


def test_the_command_writes_the_figure_and_its_numbers(tmp_path, capsys):
    out = tmp_path / "fig.png"
    argv = ["xiong_fig3", "--depths", "2", "--seeds", "2", "--batches", "1", "--out", str(out)]
    assert main(argv) == 0
    assert out.read_bytes()[:4] == b"\x89PNG"
    record = json.loads(out.with_suffix(".json").read_text())
    assert record["seeds"] == [0, 1]
    assert len(record["w2_grad_norm"]["2"]["post"]["decoder"]) == 2  # one per seed
    assert capsys.readouterr().out == f"wrote {out} and {out.with_suffix('.json')}\n"


def test_one_seed_is_refused_in_one_line(tmp_path, capsys):
    assert main(["xiong_fig3", "--seeds", "1", "--out", str(tmp_path / "f.png")]) == 2
    assert capsys.readouterr().err == "error: seeds=1: too few; allowed: an integer >= 2\n"
    assert not list(tmp_path.iterdir())
