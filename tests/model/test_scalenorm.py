"""ScaleNorm (Nguyen & Salazar, 2019): ``g * x / ||x||`` with one learned scalar g from
sqrt(d_model)."""

import math

import torch

from transformer_lab.model import Seq2SeqTransformer
from transformer_lab.model.norms import NORM_TYPES


def test_scalenorm_puts_every_vector_on_the_sphere_of_radius_g():
    norm = NORM_TYPES["scalenorm"](16).double()
    x = torch.randn(3, 5, 16, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    y = norm(x)
    torch.testing.assert_close(y.norm(dim=-1), torch.full((3, 5), 4.0, dtype=torch.float64))
    torch.testing.assert_close(y / 4.0, x / x.norm(dim=-1, keepdim=True))  # direction kept
    with torch.no_grad():
        norm.g.fill_(0.5)
    torch.testing.assert_close(norm(x).norm(dim=-1), torch.full((3, 5), 0.5, dtype=torch.float64))


def test_scalenorm_learns_one_scalar_per_norm_initialised_to_sqrt_d_model():
    model = Seq2SeqTransformer(13, 11, 64, 4, 1, 1, 128, norm="pre", norm_type="scalenorm")
    gains = [m.g for m in model.modules() if isinstance(m, NORM_TYPES["scalenorm"])]
    assert len(gains) == 2 + 3 + 2  # encoder layer 2, decoder layer 3, a final norm per stack
    assert all(g.shape == () and g.item() == math.sqrt(64) for g in gains)
    assert all(g.requires_grad for g in gains)


def test_scalenorm_of_a_zero_vector_is_zero_not_nan():
    norm = NORM_TYPES["scalenorm"](8)
    assert torch.equal(norm(torch.zeros(2, 8)), torch.zeros(2, 8))
