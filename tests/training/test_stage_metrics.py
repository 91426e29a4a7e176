"""The torchmetrics StageMetrics gives exactly the numbers of the hand-written accumulator
it replaced: the expected values below were printed by that accumulator (commit 8c76847)
for this very batch, seen twice."""

import pytest
import torch
from torch import nn

from transformer_lab.tokens import BOS, EOS, PAD
from transformer_lab.training.module import Seq2SeqLitModule

BEFORE_TORCHMETRICS = {
    "loss": 1.3415288925170898,
    "ppl": 3.8248868782103926,
    "token_acc": 0.7142857142857143,
    "seq_acc": 0.75,
    "seq_acc_by_len/1": 1.0,
    "seq_acc_by_len/2": 1.0,
    "seq_acc_by_len/3": 1.0,
    "seq_acc_by_len/4": 0.0,
}


class FixedOutputs(nn.Module):
    """Stands in for the network: fixed logits, fixed greedy generations."""

    def __init__(self, logits: torch.Tensor, generated: torch.Tensor):
        super().__init__()
        self.logits, self.generated = logits, generated

    def forward(self, src, tgt_in):
        return self.logits

    def generate(self, src, max_new_tokens):
        return self.generated


def fixed_batch_module(lab_module) -> tuple[Seq2SeqLitModule, dict]:
    module = lab_module(
        src_vocab_size=10, tgt_vocab_size=10, d_model=16, num_heads=2, d_ff=32, max_len=8
    )
    src = torch.tensor(
        [[3, 4, 5, EOS, PAD], [6, EOS, PAD, PAD, PAD], [7, 8, 9, 4, EOS], [5, 6, EOS, PAD, PAD]]
    )
    tgt_out = torch.tensor(
        [[5, 4, 3, EOS, PAD], [6, EOS, PAD, PAD, PAD], [4, 9, 8, 7, EOS], [6, 5, EOS, PAD, PAD]]
    )
    tgt_in = torch.tensor(
        [[BOS, 5, 4, 3, PAD], [BOS, 6, PAD, PAD, PAD], [BOS, 4, 9, 8, 7], [BOS, 6, 5, PAD, PAD]]
    )
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(4, 5, 10, generator=g, dtype=torch.float64).float()
    logits += 3.0 * nn.functional.one_hot(tgt_out, 10) * (torch.rand(4, 5, 1, generator=g) < 0.6)
    generated = torch.tensor(
        [
            [BOS, 5, 4, 3, EOS, PAD],
            [BOS, 6, EOS, PAD, PAD, PAD],
            [BOS, 4, 9, 8, 8, EOS],
            [BOS, 6, 5, EOS, PAD, PAD],
        ]
    )
    module.model = FixedOutputs(logits, generated)  # row 2 generates one wrong word
    return module, {"src": src, "tgt_in": tgt_in, "tgt_out": tgt_out}


def test_every_number_is_unchanged_from_the_hand_written_accumulator(lab_module):
    module, batch = fixed_batch_module(lab_module)
    module._evaluate(batch, "val")
    module._evaluate(batch, "val")
    values = module.metrics["val"].compute()
    assert values.keys() == BEFORE_TORCHMETRICS.keys()
    for key, expected in BEFORE_TORCHMETRICS.items():
        assert values[key] == pytest.approx(expected, rel=1e-12, abs=0), key


def test_reset_starts_the_next_validation_from_zero(lab_module):
    module, batch = fixed_batch_module(lab_module)
    module._evaluate(batch, "val")
    module.metrics["val"].reset()
    module._evaluate(batch, "val")
    module._evaluate(batch, "val")
    assert module.metrics["val"].compute()["loss"] == pytest.approx(BEFORE_TORCHMETRICS["loss"])
    assert module.metrics["val"].seqs.sum() == 8


def test_sums_are_reduced_across_ranks_by_torchmetrics(lab_module):
    module, _ = fixed_batch_module(lab_module)
    for name in ("nll", "tokens", "correct_tokens", "correct_seqs", "seqs"):
        assert module.metrics["val"]._reductions[name].__name__ == "dim_zero_sum", name
