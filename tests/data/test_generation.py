"""The pure generator of distinct examples, without a data module around it."""

import torch

from transformer_lab.data.generation import distinct_words, generate, length_counts, num_sequences
from transformer_lab.data.tasks import reverse
from transformer_lab.tokens import BOS, EOS, FIRST_CONTENT


def test_a_full_space_gets_every_length_to_its_capacity():
    # 2 content ids, lengths 1..3: 2 + 4 + 8 = 14 sequences; asking for all 14 fills each.
    assert num_sequences(2, 1, 3) == 14
    assert length_counts(14, 2, 1, 3, torch.Generator().manual_seed(0)) == [2, 4, 8]


def test_dense_and_sparse_draws_both_give_distinct_rows_of_content_ids():
    generator = torch.Generator().manual_seed(0)
    dense = distinct_words(60, 3, 4, generator)  # 64 sequences: sampled without replacement
    sparse = distinct_words(60, 6, 4, generator)  # 4096 sequences: drawn, repeats dropped
    for rows, length in ((dense, 3), (sparse, 6)):
        assert rows.shape == (60, length) and len(torch.unique(rows, dim=0)) == 60
        assert rows.min() >= FIRST_CONTENT and rows.max() < FIRST_CONTENT + 4


def test_generate_lays_out_one_example_as_src_eos_and_bos_target_eos():
    src, tgt_in, tgt_out = generate(reverse, 1, 1, 3, 3, torch.Generator().manual_seed(0))
    w = FIRST_CONTENT  # one content id: the only sequence of length 3 is w w w
    assert src.tolist() == [[w, w, w, EOS]]
    assert tgt_in.tolist() == [[BOS, w, w, w]]
    assert tgt_out.tolist() == [[w, w, w, EOS]]
