"""Sequence accuracy per source length: the numbers behind the length-generalization curve."""

import torch

from transformer_lab.tokens import BOS, EOS, PAD


def test_seq_acc_by_len_splits_seq_acc_by_source_words(lab_module):
    module = lab_module(src_vocab_size=16, tgt_vocab_size=16, d_model=16, num_heads=2)
    # sources of 3, 3, 1 and 2 words (then EOS); the targets are the sources
    tgt_out = torch.tensor([[3, 4, 5, EOS], [6, 7, 8, EOS], [9, EOS, PAD, PAD], [3, 3, EOS, PAD]])
    tgt_in = torch.tensor([[BOS, 3, 4, 5], [BOS, 6, 7, 8], [BOS, 9, PAD, PAD], [BOS, 3, 3, PAD]])
    batch = {"src": tgt_out, "tgt_in": tgt_in, "tgt_out": tgt_out}
    right = torch.cat((torch.full((4, 1), BOS), tgt_out), 1)  # [4, 5]
    wrong_rows_1_and_3 = right.clone()
    wrong_rows_1_and_3[[1, 3], 1] = 10
    module.model.generate = lambda src, max_new_tokens: wrong_rows_1_and_3
    module._evaluate(batch, "test")
    values = module.metrics["test"].compute()
    assert values["seq_acc"] == 0.5
    by_len = {k: v for k, v in values.items() if k.startswith("seq_acc_by_len/")}
    assert by_len == {"seq_acc_by_len/1": 1.0, "seq_acc_by_len/2": 0.0, "seq_acc_by_len/3": 0.5}
