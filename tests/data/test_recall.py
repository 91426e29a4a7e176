"""Multi-query associative recall: each target is the values of the queried keys; keys and
queries distinct; test_long holds more pairs than training; the vocabularies differ."""

import pytest

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.data.word_tasks import RecallDataModule


def examples(dm, split):
    for src, tgt in zip(dm.splits[split].src, dm.splits[split].tgt_out, strict=True):
        pairs, queries = dm.src_codec.decode(src.tolist()).split(" ? ")
        words = pairs.split()
        yield (
            dict(zip(words[::2], words[1::2], strict=True)),
            words[::2],
            queries.split(),
            (dm.tgt_codec.decode(tgt.tolist()).split()),
        )


def test_every_target_is_the_queried_values_in_order():
    dm = RecallDataModule(
        num_keys=12,
        num_values=5,
        num_queries=2,
        min_task_len=2,
        max_task_len=5,
        train_size=500,
        val_size=50,
        test_size=50,
        test_long_size=50,
        test_long_max_task_len=9,
    )
    for split, lengths in [
        ("train", range(2, 6)),
        ("test", range(2, 6)),
        ("test_long", range(6, 10)),
    ]:
        seen_lengths = set()
        for memory, keys, queries, target in examples(dm, split):
            assert len(set(keys)) == len(keys) and len(set(queries)) == len(queries) == 2
            assert set(queries) <= set(keys)
            assert target == [memory[q] for q in queries]
            seen_lengths.add(len(keys))
        assert seen_lengths == set(lengths), split
    assert dm.src_vocab_size == 3 + 12 + 5 + 1 and dm.tgt_vocab_size == 3 + 5
    assert dm.max_seq_len == max(
        max(int(s.src_len.max()), int(s.tgt_len.max())) for s in dm.splits.values()
    )


def test_more_queries_than_the_fewest_pairs_is_refused():
    with pytest.raises(InvalidSetting, match=r"num_queries=3: more than the min_task_len=2 pairs"):
        RecallDataModule(num_queries=3, min_task_len=2)


def test_more_pairs_than_keys_is_refused():
    with pytest.raises(
        InvalidSetting, match=r"test_long_max_task_len=12: more pairs than the num_keys=8"
    ):
        RecallDataModule(num_keys=8, test_long_size=10, test_long_max_task_len=12)
