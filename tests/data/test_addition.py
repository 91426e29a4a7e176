"""Addition digit by digit: the right sums, in reversed or plain digit order, with operands
of the trained digits in train/val/test and longer ones in test_long."""

import pytest

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.data import addition
from transformer_lab.data.word_tasks import AdditionDataModule


def test_an_example_writes_operands_and_sum_least_significant_digit_first():
    assert addition.example(123, 45, reversed_digits=True) == (
        ["3", "2", "1", "+", "5", "4"],
        ["8", "6", "1"],
    )
    assert addition.example(123, 45, reversed_digits=False) == (
        ["1", "2", "3", "+", "4", "5"],
        ["1", "6", "8"],
    )
    assert addition.example(999, 1, reversed_digits=True)[1] == ["0", "0", "0", "1"]


def operands_and_sum(dm, split):
    """``(a, b, target sum)`` of every example of the split, read back from its text."""
    flip = -1 if dm.hparams.reversed_digits else 1
    rows = []
    for src, tgt in zip(dm.splits[split].src, dm.splits[split].tgt_out, strict=True):
        a, b = dm.src_codec.decode(src.tolist()).split(" + ")
        total = dm.tgt_codec.decode(tgt.tolist())
        rows.append(tuple("".join(n.split()[::flip]) for n in (a, b, total)))
    return rows


@pytest.mark.parametrize("reversed_digits", [True, False])
def test_every_target_is_the_sum_and_lengths_split_at_max_len(reversed_digits):
    dm = AdditionDataModule(
        max_task_len=3,
        reversed_digits=reversed_digits,
        train_size=2000,
        val_size=200,
        test_size=200,
        test_long_size=200,
        test_long_max_task_len=5,
    )
    sources = {}
    for split in ("train", "val", "test", "test_long"):
        rows = operands_and_sum(dm, split)
        assert all(int(a) + int(b) == int(s) for a, b, s in rows)
        assert all(n == str(int(n)) for row in rows for n in row)  # no leading zeros
        digits = {len(n) for a, b, _ in rows for n in (a, b)}
        assert digits == ({1, 2, 3} if split != "test_long" else {4, 5}), split
        sources[split] = {(a, b) for a, b, _ in rows}
        assert len(sources[split]) == len(rows)  # distinct
    assert not sources["train"] & sources["val"]
    assert not (sources["train"] | sources["val"]) & sources["test"]
    assert dm.max_seq_len == 2 * 5 + 2 >= max(int(s.src_len.max()) for s in dm.splits.values())


def test_the_splits_are_a_function_of_the_seed():
    def first(seed):
        return AdditionDataModule(train_size=50, seed=seed).sample("train", 5)["src"].tolist()

    assert first(0) == first(0) != first(1)


def test_more_examples_than_operand_pairs_is_refused_before_drawing():
    message = (
        "train_size=200: more distinct train sources than there are: operands of 1..1 digits "
        "has 100 distinct sequences; allowed: train_size <= 100, or a larger max_task_len"
    )
    with pytest.raises(InvalidSetting) as refused:
        AdditionDataModule(max_task_len=1, train_size=200)
    assert str(refused.value) == message
