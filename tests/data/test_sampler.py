"""The samplers alone: evaluation shards without repeats, training shards that keep the
ranks in step, and the resume position from the optimizer step."""

import pytest
import torch

from transformer_lab.data.sampler import EpochShuffle, EvalShard
from transformer_lab.data.streams import random_stream


def epoch_order(num_examples: int, seed: int, epoch: int) -> list[int]:
    """The single-process order of an epoch as it always was: a permutation of its stream."""
    return torch.randperm(num_examples, generator=random_stream(seed, "shuffle", epoch)).tolist()


@pytest.mark.parametrize(("num_examples", "world_size"), [(500, 3), (500, 8), (1000, 3), (7, 3)])
def test_eval_shards_together_hold_every_example_exactly_once(num_examples, world_size):
    shards = [list(EvalShard(range(num_examples), world_size, rank)) for rank in range(world_size)]
    assert sorted(i for shard in shards for i in shard) == list(range(num_examples))
    for rank, shard in enumerate(shards):
        assert shard == list(range(rank, num_examples, world_size))  # in order, interleaved
    assert [len(s) for s in shards] == [
        len(EvalShard(range(num_examples), world_size, r)) for r in range(world_size)
    ]


def test_one_process_evaluates_the_split_in_order():
    assert list(EvalShard(range(5))) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize(("num_examples", "world_size"), [(500, 3), (500, 8), (512, 2), (5, 8)])
def test_training_shards_are_equal_length_and_cover_the_epoch(num_examples, world_size):
    samplers = [EpochShuffle(num_examples, 3, world_size, rank) for rank in range(world_size)]
    shards = [list(sampler) for sampler in samplers]
    per_rank = -(-num_examples // world_size)
    assert [len(shard) for shard in shards] == [per_rank] * world_size
    assert [len(sampler) for sampler in samplers] == [per_rank] * world_size
    served = sorted(i for shard in shards for i in shard)
    assert set(served) == set(range(num_examples))  # every example, and ...
    assert len(served) - num_examples == per_rank * world_size - num_examples  # ... the pad
    # dealt out from the epoch's one order, padded by its first indices
    order = epoch_order(num_examples, 3, 0)
    padded = (order * world_size)[: per_rank * world_size]
    assert shards == [padded[rank::world_size] for rank in range(world_size)]


def test_one_process_trains_on_the_order_it_always_had_and_moves_on_each_epoch():
    sampler = EpochShuffle(100, seed=7)
    assert [list(sampler) for _ in range(3)] == [epoch_order(100, 7, e) for e in range(3)]


def test_set_epoch_from_lightning_does_not_move_the_order():
    sampler = EpochShuffle(100, seed=7)
    sampler.set_epoch(5)  # Lightning's epoch counter; the sampler keeps its own
    assert list(sampler) == epoch_order(100, 7, 0)


@pytest.mark.parametrize(
    ("global_step", "accumulate", "epoch", "first_batch"),
    [
        (0, 1, 0, 0),
        (9, 1, 0, 9),  # 100 examples in batches of 8: 13 batches an epoch
        (13, 1, 1, 0),  # exactly one epoch done
        (30, 1, 2, 4),
        # accumulating 2: the epoch's last batch steps alone, so an epoch is 7 steps
        (6, 2, 0, 12),
        (9, 2, 1, 4),
    ],
)
def test_resume_starts_at_the_first_batch_the_steps_did_not_train(
    global_step, accumulate, epoch, first_batch
):
    sampler = EpochShuffle(100, seed=7)
    sampler.resume(global_step, accumulate, batch_size=8)
    assert list(sampler) == epoch_order(100, 7, epoch)[first_batch * 8 :]
    assert list(sampler) == epoch_order(100, 7, epoch + 1)  # then whole epochs again


def test_a_resumed_rank_continues_its_own_shard():
    # 500 examples on 3 ranks: 167 each, 11 batches of 16; step 15 is batch 4 of epoch 1.
    for rank in range(3):
        straight = EpochShuffle(500, 1, 3, rank)
        list(straight)  # epoch 0
        epoch1 = list(straight)
        resumed = EpochShuffle(500, 1, 3, rank)
        resumed.resume(15, 1, batch_size=16)
        assert list(resumed) == epoch1[4 * 16 :]
