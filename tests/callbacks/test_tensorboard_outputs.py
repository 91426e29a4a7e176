"""What the callbacks leave in TensorBoard and in the run folder, read back with
TensorBoard's own reader (one tiny real post-norm run, see conftest)."""

import json
import math

import pytest
from hydra.utils import instantiate
from matplotlib.image import imread
from omegaconf import OmegaConf

from transformer_lab.callbacks.attention_maps import KINDS, attention_figure_size
from transformer_lab.callbacks.plotting import DPI
from transformer_lab.callbacks.stacks import STACKS
from transformer_lab.model.residual import NORM_PLACEMENTS
from transformer_lab.tokens import PAD

pytestmark = pytest.mark.slow  # the shared run takes a few seconds
LAYERS, HEADS = 2, 2


def test_attention_maps_are_logged_per_kind_layer_and_example_at_every_validation(events, tiny_run):
    for kind in KINDS:
        for layer in range(LAYERS):
            for example in range(2):
                name = f"{kind}/layer{layer}/example{example}"
                assert [i.step for i in events.Images(f"attention/{name}")] == [6, 12]
                for step in (6, 12):
                    png = (
                        tiny_run / "attention" / f"step{step:06d}" / f"{name.replace('/', '_')}.png"
                    )
                    assert png.is_file()


def test_an_attention_image_has_a_cell_per_query_and_key_token_for_each_head(events, tiny_run):
    data = instantiate(OmegaConf.load(tiny_run / "config_resolved.yaml").data)  # the run's
    example = data.sample("val", 1)
    n_src = int((example["src"] != PAD).sum())  # words + EOS
    n_tgt = int((example["tgt_in"] != PAD).sum())  # BOS + words
    expected = {
        "encoder": attention_figure_size(HEADS, n_src, n_src),
        "decoder_self": attention_figure_size(HEADS, n_tgt, n_tgt),
        "cross": attention_figure_size(HEADS, n_tgt, n_src),
    }
    for kind, (width, height) in expected.items():
        image = events.Images(f"attention/{kind}/layer0/example0")[-1]
        assert abs(image.width - width * DPI) <= 1 and abs(image.height - height * DPI) <= 1
        png = imread(tiny_run / "attention" / "step000012" / f"{kind}_layer0_example0.png")
        assert png.shape[:2] == (image.height, image.width)


def test_the_positional_encoding_is_drawn_once(events, tiny_run):
    assert len(events.Images("positional/sinusoidal")) == 1
    assert (tiny_run / "positional_sinusoidal.png").is_file()


def test_twin_gradient_norms_are_logged_per_placement_with_the_layer_as_step(events, tiny_run):
    for placement in NORM_PLACEMENTS:
        for stack in STACKS:
            scalars = events.Scalars(f"norm_init/grad/{placement}/{stack}/ffn.w2")
            assert [s.step for s in scalars] == list(range(LAYERS))
            assert all(0 < s.value < math.inf for s in scalars)
    assert len(events.Images("norm_init/grad_by_layer")) == 1
    record = json.loads((tiny_run / "norm_comparison.json").read_text())
    assert list(record["grad_norm"]) == list(NORM_PLACEMENTS)
    assert record["model"]["d_model"] == 32


def test_layer_stats_are_logged_every_k_steps_with_plausible_values(events):
    for stack in STACKS:
        for layer in range(LAYERS):
            grad, rms, update = (
                events.Scalars(f"norm/{stat}/{stack}/{layer}") for stat in ("grad", "rms", "update")
            )
            for scalars in (grad, rms, update):
                assert [s.step for s in scalars] == [0, 3, 6, 9]
            assert all(0 < s.value < math.inf for s in grad)
            # post-norm: every layer ends in a LayerNorm whose gain and bias are still ~1, ~0
            assert all(s.value == pytest.approx(1.0, abs=0.05) for s in rms)
            # warmup starts the learning rate near 0: small but real updates
            assert all(0 < s.value < 0.01 for s in update)
