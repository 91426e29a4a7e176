"""The task functions on worked examples, and the block form the data module relies on."""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.data.tasks import TASKS, copy, reverse, sort


def test_reverse_flips_the_word_order():
    assert reverse(torch.tensor([5, 3, 4])).tolist() == [4, 3, 5]


def test_copy_returns_the_same_words_in_a_new_tensor():
    words = torch.tensor([5, 3, 4])
    out = copy(words)
    assert out.tolist() == [5, 3, 4]
    out[0] = 9  # a copy, not a view: the caller's source must stay intact
    assert words.tolist() == [5, 3, 4]


def test_sort_orders_ascending_and_keeps_repeats():
    assert sort(torch.tensor([7, 3, 5, 3])).tolist() == [3, 3, 5, 7]


def test_each_task_name_maps_a_worked_example_to_its_target():
    # The names configs use (data.task=...) must reach the function they promise.
    words = torch.tensor([5, 3, 4, 3])
    targets = {name: task(words).tolist() for name, task in TASKS.items()}
    assert targets == {"reverse": [3, 4, 3, 5], "copy": [5, 3, 4, 3], "sort": [3, 3, 4, 5]}


@pytest.mark.parametrize("name", sorted(TASKS))
def test_block_of_rows_maps_like_each_row_alone(name):
    task = TASKS[name]
    block = torch.tensor([[5, 3, 4, 9], [12, 3, 3, 7], [4, 4, 4, 4]])  # [N, L]
    expected = torch.stack([task(row) for row in block])
    assert torch.equal(task(block), expected)


@given(st.lists(st.integers(3, 40), min_size=1, max_size=20))
def test_targets_are_permutations_of_the_words(values):
    words = torch.tensor(values)
    for task in TASKS.values():
        target = task(words)
        assert target.dtype == torch.long
        assert sorted(target.tolist()) == sorted(values)
    assert reverse(reverse(words)).tolist() == values
    assert sort(words).tolist() == sorted(values)
