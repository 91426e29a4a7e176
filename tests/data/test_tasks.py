"""The tasks on worked examples, the block form the data module relies on, and every
registered task's declared target length, which the datamodule's positions are read from."""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.data import SyntheticDataModule
from transformer_lab.data.tasks import TASKS


def apply(name: str, words: list[int]) -> list[int]:
    return TASKS[name].apply(torch.tensor(words)).tolist()


def test_reverse_flips_the_word_order():
    assert apply("reverse", [5, 3, 4]) == [4, 3, 5]


def test_copy_returns_the_same_words_in_a_new_tensor():
    words = torch.tensor([5, 3, 4])
    out = TASKS["copy"].apply(words)
    assert out.tolist() == [5, 3, 4]
    out[0] = 9  # a copy, not a view: the caller's source must stay intact
    assert words.tolist() == [5, 3, 4]


def test_sort_orders_ascending_and_keeps_repeats():
    assert apply("sort", [7, 3, 5, 3]) == [3, 3, 5, 7]


def test_duplicate_writes_the_words_twice_over():
    assert apply("duplicate", [5, 3, 4]) == [5, 3, 4, 5, 3, 4]


@pytest.mark.parametrize("name", list(TASKS))
def test_block_of_rows_maps_like_each_row_alone(name):
    task = TASKS[name]
    block = torch.tensor([[5, 3, 4, 9], [12, 3, 3, 7], [4, 4, 4, 4]])  # [N, L]
    expected = torch.stack([task.apply(row) for row in block])
    assert torch.equal(task.apply(block), expected)


@pytest.mark.parametrize("name", list(TASKS))
@given(values=st.lists(st.integers(3, 40), min_size=1, max_size=20))
def test_each_tasks_target_has_the_length_it_declares_and_only_the_source_words(name, values):
    target = TASKS[name].apply(torch.tensor(values))
    assert target.dtype == torch.long
    assert target.shape == (TASKS[name].target_length(len(values)),)
    assert set(target.tolist()) == set(values)


@pytest.mark.parametrize("name", list(TASKS))
def test_the_datamodules_positions_are_exactly_those_its_widest_split_needs(name):
    """``max_seq_len`` (which the job holds ``model.max_len`` to) is the width of the
    widest ``src``, ``tgt_in`` or ``tgt_out`` of any split, test_long included: a task
    whose targets outgrow its sources (duplicate: 2 x 8 words and EOS) is not cut short."""
    datamodule = SyntheticDataModule(
        task=name,
        min_task_len=2,
        max_task_len=5,
        test_long_size=20,
        test_long_max_task_len=8,
        train_size=100,
        val_size=20,
        test_size=20,
    )
    widest = max(
        getattr(split, key).shape[1]
        for split in datamodule.splits.values()
        for key in ("src", "tgt_in", "tgt_out")
    )
    assert datamodule.max_seq_len == widest
    assert widest == 1 + max(8, TASKS[name].target_length(8))
