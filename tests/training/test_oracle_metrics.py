"""The oracle-length metrics of the test stages, on a hand-made batch whose numbers are
counted by hand: exact match, word accuracy and word accuracy by target position."""

import pytest
import torch

from transformer_lab.tokens import BOS, EOS, PAD
from transformer_lab.training import module as module_file
from transformer_lab.training.metrics import StageMetrics

TGT_OUT = torch.tensor(
    [[5, 4, 3, EOS, PAD], [6, EOS, PAD, PAD, PAD], [4, 9, 8, 7, EOS], [6, 5, EOS, PAD, PAD]]
)
# row 0 misses its 3rd word, row 2 its 4th; rows 1 and 3 are right
ORACLE = torch.tensor(
    [[5, 4, 9, EOS, PAD], [6, EOS, PAD, PAD, PAD], [4, 9, 8, 8, EOS], [6, 5, EOS, PAD, PAD]]
)
BY_HAND = {
    "oracle_seq_acc": 2 / 4,
    "oracle_token_acc": 8 / 10,  # words right of the 3 + 1 + 4 + 2
    "oracle_token_acc_by_pos/1": 4 / 4,
    "oracle_token_acc_by_pos/2": 3 / 3,  # the targets of >= 2 words: rows 0, 2, 3
    "oracle_token_acc_by_pos/3": 1 / 2,  # rows 0 (wrong) and 2
    "oracle_token_acc_by_pos/4": 0 / 1,  # row 2 (wrong)
}


def oracle_part(values: dict) -> dict:
    return {k: v for k, v in values.items() if k.startswith("oracle_")}


def add(metrics: StageMetrics, rows: slice, oracle: bool = True) -> None:
    """The batch's ``rows``: only the oracle decodings matter here."""
    targets = TGT_OUT[rows]
    correct = torch.ones(targets.size(0), dtype=torch.bool)
    words = (targets != PAD).sum(1) - 1
    oracle = ORACLE[rows] if oracle else None
    metrics.update(torch.tensor(1.0), targets.flatten(), targets.flatten(), words, correct, oracle)


def test_oracle_metrics_count_words_by_target_position_and_ignore_the_forced_eos():
    metrics = StageMetrics(num_lengths=8)
    add(metrics, slice(None))
    assert oracle_part(metrics.compute()) == pytest.approx(BY_HAND, rel=1e-12, abs=0)
    add(metrics, slice(0, 2))  # a second batch adds to the sums
    values = metrics.compute()
    assert values["oracle_seq_acc"] == pytest.approx(3 / 6)
    assert values["oracle_token_acc_by_pos/3"] == pytest.approx(1 / 3)


def test_a_split_without_oracle_decodings_reports_no_oracle_metrics():
    metrics = StageMetrics(num_lengths=8)
    add(metrics, slice(None))
    metrics.reset()
    add(metrics, slice(None), oracle=False)
    values = metrics.compute()
    assert oracle_part(values) == {} and values["seq_acc"] == 1.0


def test_the_test_stages_decode_at_each_targets_length_and_validation_does_not(
    lab_module, monkeypatch
):
    module = lab_module(
        src_vocab_size=10, tgt_vocab_size=10, d_model=16, num_heads=2, d_ff=32, max_len=8
    )
    asked = []

    def oracle(model, src, lengths):
        asked.append(lengths.tolist())
        return torch.cat((torch.full((4, 1), BOS), ORACLE), dim=1)

    monkeypatch.setattr(module_file, "greedy_to_length", oracle)
    tgt_in = torch.cat((torch.full((4, 1), BOS), TGT_OUT[:, :-1]), dim=1).masked_fill(
        TGT_OUT == PAD, PAD
    )
    batch = {"src": TGT_OUT, "tgt_in": tgt_in, "tgt_out": TGT_OUT}
    module._evaluate(batch, "val")
    assert asked == [] and oracle_part(module.metrics["val"].compute()) == {}
    for stage in ("test", "test_long"):
        module._evaluate(batch, stage)
        assert oracle_part(module.metrics[stage].compute()) == pytest.approx(BY_HAND)
    assert asked == [[3, 1, 4, 2]] * 2  # target words, EOS not counted
