"""A training order whose batches hold examples of similar lengths: less padding, so fewer
wasted positions per step, where a split's lengths vary widely (your own text).

Each epoch's random order is cut into pools of ``pool_batches`` global batches (a batch of
every rank together); a pool is sorted by length and cut into global batches again, and
the full batches of the epoch are shuffled (a short one stays last: the loaders cut an
order into batches where it stands, so one in the middle would shift every later cut). So
a batch is still a random draw from the split, only one drawn among neighbours in length,
and which lengths a step sees is random. Each rank takes every ``num_replicas``-th index
of a global batch, so its share is of the same lengths. The order is a pure function of
``(seed, epoch)``, so a resume positions it as it does the plain shuffle
(:class:`~.sampler.EpochShuffle`, whose dealing it keeps).
"""

import torch

from transformer_lab.data.sampler import EpochShuffle


class LengthBuckets(EpochShuffle):
    """:class:`EpochShuffle` with batches of similar ``lengths`` (``[N]``, one per example:
    the longer of its source and target)."""

    def __init__(
        self,
        lengths: torch.Tensor,
        batch_size: int,
        seed: int,
        num_replicas: int = 1,
        rank: int = 0,
        pool_batches: int = 50,
    ):
        super().__init__(len(lengths), seed, num_replicas, rank)
        self.lengths = lengths
        self.global_batch = batch_size * num_replicas
        self.pool = pool_batches * self.global_batch

    def epoch_order(self, stream: torch.Generator) -> torch.Tensor:
        order = torch.randperm(len(self.lengths), generator=stream)  # [N]
        pools = [pool[self.lengths[pool].argsort(stable=True)] for pool in order.split(self.pool)]
        batches = torch.cat(pools).split(self.global_batch)
        full = len(self.lengths) // self.global_batch  # a short last batch stays last, or
        shuffled = torch.randperm(full, generator=stream).tolist()  # the ones after it
        return torch.cat([batches[i] for i in shuffled] + list(batches[full:]))  # [N]
