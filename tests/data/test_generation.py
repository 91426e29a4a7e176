"""The pure generator of distinct examples, without a data module around it."""

import torch

from transformer_lab.data.generation import (
    _first_occurrences,
    _keys,
    distinct_words,
    generate,
    length_counts,
    num_sequences,
)
from transformer_lab.data.tasks import TASKS
from transformer_lab.tokens import BOS, EOS, FIRST_CONTENT

reverse = TASKS["reverse"].apply


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


def test_length_counts_leave_out_the_taken_sequences_of_each_length():
    # 2 content ids, lengths 1..3 (2, 4, 8 sequences), of which 2, 1 and 3 are taken.
    counts = length_counts(8, 2, 1, 3, torch.Generator().manual_seed(0), taken=[2, 1, 3])
    assert counts == [0, 3, 5]  # all the room there is


def rows_as_tuples(rows: torch.Tensor) -> set[tuple[int, ...]]:
    return {tuple(row) for row in rows.tolist()}


def test_dense_and_sparse_draws_both_avoid_the_excluded_rows():
    generator = torch.Generator().manual_seed(0)
    # 64 sequences, 40 excluded, all 24 others drawn: dense (a permutation of all 64);
    # 4096 sequences, 500 excluded, 500 drawn: sparse (draws with repeats dropped)
    for length, exclude_count, count in ((3, 40, 24), (6, 500, 500)):
        exclude = distinct_words(exclude_count, length, 4, generator)
        rows = distinct_words(count, length, 4, generator, exclude)
        assert rows.shape == (count, length) and len(rows_as_tuples(rows)) == count
        assert not rows_as_tuples(rows) & rows_as_tuples(exclude)
    assert rows.min() >= FIRST_CONTENT and rows.max() < FIRST_CONTENT + 4


def test_rows_compare_the_same_as_numbers_or_as_rows():
    # Rows are told apart by their base-num_words numbers where those fit 63 bits, by the
    # rows themselves otherwise; both find the same first occurrences.
    rows = torch.randint(3, (500, 4), generator=torch.Generator().manual_seed(0))  # repeats
    numbers = _keys(rows, 3)
    assert numbers.shape == _keys(rows, 8000).shape == (500,)  # 8000**4 < 2**63
    assert _keys(torch.zeros(1, 5, dtype=torch.long), 8000).shape == (1, 5)  # 8000**5 > 2**63
    first = _first_occurrences(numbers)
    assert torch.equal(first, _first_occurrences(rows))
    assert len(first) == len(rows_as_tuples(rows))


def test_generate_excludes_earlier_sources_and_is_a_function_of_its_stream():
    def draw(count, seed, exclude=()):
        return generate(reverse, count, 3, 2, 5, torch.Generator().manual_seed(seed), exclude)

    first = draw(200, 0)
    second = draw(100, 1, [first[0]])
    assert all(torch.equal(a, b) for a, b in zip(second, draw(100, 1, [first[0]]), strict=True))
    earlier = {tuple(row[row != 0].tolist()) for row in first[0]}
    later = {tuple(row[row != 0].tolist()) for row in second[0]}
    assert len(later) == 100 and not earlier & later
