"""DeepNet's bound as a test (§4.2-4.3, Figure 5): the measurement is the η → 0 limit of
one SGD step, and the rule says "bounded" of a flat slope and "grows" of a steep one, with
the exact sign-flip p the design can reach."""

import math

import pytest

from transformer_lab.papers import deepnet_bound
from transformer_lab.papers.measure import task_batches


def _one_step(depth: int, placement: str, rate: float) -> float:
    model = deepnet_bound._model(depth, placement, seed=0)
    batch, probe = task_batches(1, 32, 0)[0], task_batches(1, 32, 10_000)[0]
    return deepnet_bound.sgd_update(model, batch, probe, rate)


def test_the_sgd_update_per_unit_rate_is_its_small_rate_limit():
    """Halving η changes ||ΔF|| / η by under a thousandth: the statistic is the limit the
    §4.3 GOAL speaks of, not a finite step's."""
    full, half = _one_step(2, "post", 1e-4), _one_step(2, "post", 5e-5)
    assert full == pytest.approx(half, rel=1e-3)


def test_deepnorm_moves_the_logits_less_than_post_norm_per_sgd_step():
    """At 6+6 layers one SGD step changes DeepNorm's logits over ten times less than
    post-norm's (its branches start smaller by beta, its residual larger by alpha)."""
    assert 10 * _one_step(6, "deepnorm", 1e-4) < _one_step(6, "post", 1e-4)


def _result(exponents: dict[str, float]) -> dict:
    """A measurement whose statistic is depth ** exponent times a seed's own factor."""
    factors = [1.0 + 0.05 * s for s in deepnet_bound.SEEDS]
    return {
        placement: {
            optimiser: {d: [f * d**exponent for f in factors] for d in deepnet_bound.DEPTHS}
            for optimiser in deepnet_bound.OPTIMISERS
        }
        for placement, exponent in exponents.items()
    }


def test_a_flat_deepnorm_and_a_steep_post_norm_are_both_supported_at_the_designs_least_p():
    verdicts = deepnet_bound.judge(_result({"deepnorm": 0.05, "post": 1.0}))
    assert {v["verdict"] for v in verdicts} == {"supported"}
    for verdict in verdicts:
        assert verdict["p"] == pytest.approx(1 / 2 ** len(deepnet_bound.SEEDS))
        assert verdict["p_holm"] == pytest.approx(4 / 2 ** len(deepnet_bound.SEEDS))


def test_a_deepnorm_update_growing_like_the_square_root_of_depth_is_not_bounded():
    verdicts = {v["id"]: v for v in deepnet_bound.judge(_result({"deepnorm": 0.5, "post": 0.5}))}
    assert verdicts["deepnorm_update_bounded_sgd"]["verdict"] == "not shown"
    assert verdicts["deepnorm_update_bounded_sgd"]["slope"] == pytest.approx(0.5)
    assert verdicts["post_update_grows_sgd"]["verdict"] == "supported"


def test_slopes_are_the_per_seed_least_squares_on_the_logs():
    by_depth = {d: [3.0 * d**0.7, 2.0 * d**-0.2] for d in (6, 12, 24, 48)}
    assert deepnet_bound.slopes(by_depth) == pytest.approx([0.7, -0.2])
    assert math.isclose(deepnet_bound.sign_flip_p([1.0, 2.0, 3.0], "greater"), 1 / 8)
