"""The decoding row's own check: cached and recomputed greedy decoding of the benchmark's
model give the same tokens (the whole --quick run: tests/e2e/test_bench.py)."""

import torch

from transformer_lab.bench.inference import greedy_outputs
from transformer_lab.bench.workloads import QUICK


def test_cached_and_recomputed_greedy_decoding_give_identical_tokens():
    cached, recomputed = greedy_outputs(QUICK, new_tokens=12)
    assert cached.shape == (QUICK.batch, 13)
    assert torch.equal(cached, recomputed)
