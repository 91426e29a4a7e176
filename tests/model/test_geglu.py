"""GEGLU: ``W2 (GELU(xW) * xV)`` (Shazeer, 2020, eq. 6), at SwiGLU's parameter budget."""

import torch
import torch.nn.functional as F

from transformer_lab.model.layers import FFNS, swiglu_hidden


def test_geglu_gates_the_value_projection_with_the_gelu_of_the_gate_projection():
    torch.manual_seed(0)
    ffn = FFNS["geglu"](8, 24, 0.0).double()
    x = torch.randn(2, 3, 8, dtype=torch.float64)
    w, v = ffn.w1.weight.chunk(2)  # [hidden, 8] each: the gate's W, then V
    b_w, b_v = ffn.w1.bias.chunk(2)
    expected = ffn.w2(F.gelu(x @ w.T + b_w) * (x @ v.T + b_v))
    torch.testing.assert_close(ffn(x), expected, atol=1e-12, rtol=0)
    swapped = ffn.w2(F.gelu(x @ v.T + b_v) * (x @ w.T + b_w))  # the gate is the first block
    assert (ffn(x) - swapped).abs().max() > 1e-3


def test_geglu_has_three_matrices_of_two_thirds_the_hidden_width():
    ffn = FFNS["geglu"](512, 2048, 0.0)
    hidden = swiglu_hidden(2048)  # 1368
    assert ffn.w1.weight.shape == (2 * hidden, 512) and ffn.w2.weight.shape == (512, hidden)
    assert sum(p.numel() for p in ffn.parameters()) == sum(
        p.numel() for p in FFNS["swiglu"](512, 2048, 0.0).parameters()
    )
