"""DeepNet's picture (§3, Figure 4; §4.2, Figure 5) on the lab's model: at 6+6 layers, lr
3e-3 without warmup, over 2 seeds, DeepNorm's first update is smaller than post-norm's, and
after 10 steps post-norm's decoder gradient has vanished in its lower layers where
pre-norm's and DeepNorm's have not."""

import pytest

from transformer_lab.papers import deepnet_update

pytestmark = pytest.mark.slow  # trains 6 tiny models for 10 steps: a few seconds


@pytest.fixture(scope="module")
def six():
    return deepnet_update.measure([6], range(2), steps=10, lr=3e-3, d_model=32)[6]


def test_deepnorm_first_update_is_smaller_than_post_norms_in_every_seed(six):
    for post, deep in zip(six["post"], six["deepnorm"], strict=True):
        assert deep["update"][0] < 0.6 * post["update"][0]


def test_post_norm_lower_decoder_gradient_vanishes_after_the_first_steps(six):
    for run in six["post"]:
        assert run["decoder_grad"][0] < 0.05 * run["decoder_grad"][-1]
    for placement in ("pre", "deepnorm"):
        for run in six[placement]:
            assert run["decoder_grad"][0] > 0.3 * run["decoder_grad"][-1]


def test_post_norm_lower_decoder_gradient_falls_during_the_first_steps_not_at_init(six):
    for run in six["post"]:
        assert run["decoder_grad"][0] < 0.2 * run["decoder_grad_init"][0]


def test_every_step_has_a_finite_update(six):
    for runs in six.values():
        for run in runs:
            assert len(run["update"]) == 10
            assert all(0 < u < float("inf") for u in run["update"])
