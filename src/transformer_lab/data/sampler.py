"""The training order: a shuffle per epoch that a rerun and a resumed run both reproduce."""

from collections.abc import Iterator

import torch
from torch.utils.data import Sampler

from transformer_lab.data.streams import random_stream


class EpochShuffle(Sampler[int]):
    """A random order that is a pure function of ``(seed, epoch)``.

    Lightning calls :meth:`set_epoch` before each training epoch, so epoch e always sees
    the same order -- in a rerun and in a run resumed from a checkpoint alike (a seeded
    ``RandomSampler`` would restart at epoch 0's order on resume). Iterating without
    ``set_epoch`` moves on to the next epoch, like any shuffling sampler; this also keeps
    every DDP rank in step under Lightning's ``DistributedSamplerWrapper``.

    ``skip`` drops the first indices of the next epoch only: a run resumed mid-epoch
    continues where it stopped instead of replaying the epoch's first batches.
    """

    def __init__(self, num_samples: int, seed: int):
        self.num_samples = num_samples
        self.seed = seed
        self.epoch = 0
        self.skip = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return self.num_samples

    def __iter__(self) -> Iterator[int]:
        order = torch.randperm(
            self.num_samples, generator=random_stream(self.seed, "shuffle", self.epoch)
        )
        self.epoch += 1
        start, self.skip = self.skip, 0
        return iter(order[start:].tolist())
