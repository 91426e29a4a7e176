"""Positional encodings: the registry, rotary's relative property, ALiBi's biases and slopes."""

import pytest
import torch

from transformer_lab.model import masks
from transformer_lab.model.attention import MultiHeadAttention
from transformer_lab.model.positional import (
    POSITIONAL_ENCODINGS,
    ALiBi,
    Learned,
    PositionalEncoding,
    Rotary,
    Sinusoidal,
    alibi_slopes,
    build_positional_encoding,
    rotate,
    sinusoid_table,
)

F64 = torch.float64


NAMED = ("sinusoidal", "learned", "rotary", "alibi", "none")  # this test's worked examples


def test_each_name_builds_the_encoding_it_names_worked_at_position_1():
    # d_model 8 (head dim 4), 2 heads: frequencies 1, 0.1, 0.01, 0.001; ALiBi slopes 2^-4, 2^-8
    built = {name: build_positional_encoding(name, 8, 2, 16) for name in NAMED}
    zeros, one, both = torch.zeros(1, 1, 8), torch.tensor([1]), torch.tensor([0, 1])
    angles = torch.tensor([1.0, 0.1, 0.01, 0.001], dtype=F64)
    sinusoid = torch.stack((angles.sin(), angles.cos()), dim=1).flatten().float()
    torch.testing.assert_close(built["sinusoidal"].add(zeros, one)[0, 0], sinusoid)
    learned = built["learned"]
    assert torch.equal(learned.add(zeros, one)[0, 0], learned.table.weight[1])
    cos, sin = built["rotary"].rotation(one)  # head dim 4: frequencies 1 and 0.01
    torch.testing.assert_close(
        (cos, sin), (angles[[0, 2]].cos()[None].float(), angles[[0, 2]].sin()[None].float())
    )
    slopes = torch.tensor([2.0**-4, 2.0**-8])[:, None, None]
    distance = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
    assert torch.equal(built["alibi"].bias(both, both), -slopes * distance)
    none = built["none"]
    assert type(none) is PositionalEncoding and torch.equal(none.add(zeros, one), zeros)


@pytest.mark.parametrize("encoding", [Sinusoidal, Learned])
def test_additive_encodings_add_the_table_row_of_each_absolute_position(encoding):
    torch.manual_seed(0)
    pe = encoding(8, 2, 16).double()
    x = torch.randn(2, 3, 8, dtype=F64)
    positions = torch.tensor([5, 6, 7])
    table = pe.table if encoding is Sinusoidal else pe.table.weight
    torch.testing.assert_close(pe.add(x, positions), x + table[5:8], atol=0, rtol=0)
    assert not torch.equal(pe.add(x, positions), pe.add(x, torch.arange(3)))


def test_sinusoid_table_has_sin_in_even_and_cos_in_odd_columns_at_geometric_frequencies():
    table = sinusoid_table(50, 8).double()
    positions = torch.arange(50, dtype=F64)[:, None]
    frequencies = 10000.0 ** (-torch.arange(0, 8, 2, dtype=F64) / 8)
    torch.testing.assert_close(
        table[:, 0::2], torch.sin(positions * frequencies), atol=1e-7, rtol=0
    )
    torch.testing.assert_close(
        table[:, 1::2], torch.cos(positions * frequencies), atol=1e-7, rtol=0
    )


def test_sinusoidal_and_rotary_tables_are_not_saved_in_the_state_dict():
    assert list(Sinusoidal(8, 2, 16).state_dict()) == []
    assert list(Rotary(8, 2, 16).state_dict()) == []
    assert list(Learned(8, 2, 16).state_dict()) == ["table.weight"]


def rotated_scores(rotary: Rotary, q: torch.Tensor, k: torch.Tensor, i: int, j: int) -> float:
    """q . k after rotating q to position i and k to position j (one head, one vector each)."""
    q_rot = rotate(q, rotary.rotation(torch.tensor([i])))
    k_rot = rotate(k, rotary.rotation(torch.tensor([j])))
    return (q_rot * k_rot).sum().item()


def test_rotary_score_depends_only_on_the_relative_offset():
    rotary = Rotary(d_model=16, num_heads=2, max_len=64)
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(1, 1, 1, 8, generator=gen, dtype=F64)
    k = torch.randn(1, 1, 1, 8, generator=gen, dtype=F64)
    # the buffers hold float32 cos/sin; their rounding (~6e-8) bounds the mismatch
    tolerance = 1e-6 * q.norm().item() * k.norm().item()
    for i, j in [(0, 0), (3, 1), (1, 3), (7, 2), (10, 10)]:
        reference = rotated_scores(rotary, q, k, i, j)
        for shift in (1, 5, 40):
            shifted = rotated_scores(rotary, q, k, i + shift, j + shift)
            assert shifted == pytest.approx(reference, abs=tolerance), (i, j, shift)
    # while a different offset gives a different score
    assert abs(rotated_scores(rotary, q, k, 3, 1) - rotated_scores(rotary, q, k, 3, 2)) > 1e-2


def test_rotary_rotation_at_position_0_is_the_identity_and_preserves_norms_elsewhere():
    rotary = Rotary(d_model=16, num_heads=2, max_len=64)
    x = torch.randn(2, 2, 5, 8, generator=torch.Generator().manual_seed(1), dtype=F64)
    torch.testing.assert_close(rotate(x, rotary.rotation(torch.zeros(5, dtype=torch.long))), x)
    rotated = rotate(x, rotary.rotation(torch.arange(5)))
    torch.testing.assert_close(rotated.norm(dim=-1), x.norm(dim=-1), atol=1e-6, rtol=1e-6)
    assert (rotated - x).abs().max() > 1e-2


def test_alibi_bias_is_minus_slope_times_distance():
    alibi = ALiBi(d_model=16, num_heads=8, max_len=16)
    positions = torch.arange(5)
    bias = alibi.bias(positions, positions)
    assert bias.shape == (8, 5, 5)
    for h in range(8):
        slope = 2.0 ** -(h + 1)
        for i in range(5):
            for j in range(5):
                assert bias[h, i, j].item() == -slope * abs(i - j)


def test_alibi_bias_of_a_cached_step_is_the_matching_row_of_the_full_bias():
    alibi = ALiBi(d_model=16, num_heads=4, max_len=16)
    full = alibi.bias(torch.arange(6), torch.arange(6))
    step = alibi.bias(torch.tensor([4]), torch.arange(5))
    assert torch.equal(step, full[:, 4:5, :5])


def test_alibi_slopes_for_8_heads_are_2_to_the_minus_1_through_minus_8():
    expected = torch.tensor([2.0**-n for n in range(1, 9)])
    assert torch.equal(alibi_slopes(8), expected)


def test_alibi_slopes_for_6_heads_follow_the_papers_non_power_of_two_recipe():
    # the 4 slopes of 4 heads, then every other slope of 8 heads: 2^-1, 2^-3
    expected = torch.tensor([2.0**-2, 2.0**-4, 2.0**-6, 2.0**-8, 2.0**-1, 2.0**-3])
    assert torch.equal(alibi_slopes(6), expected)


def test_alibi_slopes_for_16_heads_are_powers_of_2_to_the_minus_half():
    expected = torch.tensor([2.0 ** (-0.5 * n) for n in range(1, 17)])
    torch.testing.assert_close(alibi_slopes(16), expected, atol=0, rtol=1e-6)


@pytest.mark.parametrize("name", list(POSITIONAL_ENCODINGS))
def test_each_encoding_adds_rotates_or_biases_exactly_as_its_class_declares(name):
    """What tests and readers learn from ``adds``, ``rotates`` and ``biases`` is what the
    encoding does: a declaration that lied would fail here."""
    encoding = POSITIONAL_ENCODINGS[name]
    pe, positions, x = encoding(8, 2, 16), torch.arange(3), torch.ones(1, 3, 8)
    assert (pe.rotation(positions) is not None) == encoding.rotates
    assert (pe.bias(positions, positions) is not None) == encoding.biases
    assert (not torch.equal(pe.add(x, positions), x)) == encoding.adds


def test_rotary_self_attention_weights_are_unchanged_when_every_position_shifts():
    """Queries and keys are both rotated, so only offsets matter inside attention."""
    torch.manual_seed(0)
    attn = MultiHeadAttention(d_model=16, num_heads=2, dropout=0.0).double().eval()
    rotary = Rotary(d_model=16, num_heads=2, max_len=64)
    x = torch.randn(2, 5, 16, generator=torch.Generator().manual_seed(1), dtype=F64)
    positions = torch.arange(5)
    mask = masks.causal(positions, positions)
    _, weights = attn(x, mask, rotation=rotary.rotation(positions), need_weights=True)
    for shift in (1, 17, 50):
        shifted = rotary.rotation(positions + shift)
        _, shifted_weights = attn(x, mask, rotation=shifted, need_weights=True)
        # within the float32 rounding of the cos/sin buffers
        torch.testing.assert_close(shifted_weights, weights, atol=1e-6, rtol=0)
    _, unrotated = attn(x, mask, need_weights=True)
    assert (unrotated - weights).abs().max() > 1e-2


@pytest.mark.parametrize("name", list(POSITIONAL_ENCODINGS))
def test_each_encoding_pictures_its_first_positions_inside_its_colour_scale(name):
    """What the positional map draws comes from the encoding itself: panels of one row per
    position (or per query position), every value inside the panel's colour scale; the
    encoding without positions draws nothing."""
    pos = build_positional_encoding(name, 8, 2, 16)
    picture = pos.picture(6)
    if type(pos) is PositionalEncoding:
        assert picture is None
        return
    assert picture.panels
    for panel in picture.panels:
        low, high = panel.limits
        assert panel.values.shape[0] == 6 and not panel.values.requires_grad
        assert low - 1e-6 <= panel.values.min().item() <= panel.values.max().item() <= high + 1e-6
