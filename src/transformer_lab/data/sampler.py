"""Which examples each process serves: the training order, and the evaluation shards.

Both samplers are ``DistributedSampler``s given ``num_replicas`` and ``rank`` by the data
module, so Lightning keeps them as they are (it substitutes its own sampler only for one
that is not a ``DistributedSampler``). Its substitutes were wrong twice over: for val/test
a ``DistributedSampler`` that pads the split by repeating examples, which the summed
metrics then counted twice; for training a ``DistributedSamplerWrapper`` around the
shuffle, which indexed past the end of an epoch shortened by a resume.
"""

from collections.abc import Iterator, Sized

import torch
from torch.utils.data import DistributedSampler

from transformer_lab.data.streams import random_stream


class EvalShard(DistributedSampler):
    """Rank ``rank`` of ``num_replicas`` evaluates examples ``rank::num_replicas``, in order.

    No example is repeated, so metrics summed over the ranks count each exactly once; one
    rank may run one batch more than another, which evaluation allows (it syncs nothing per
    batch). What Lightning's ``UnrepeatedDistributedSampler`` does for prediction, written
    here because Lightning keeps that one in a module of its internals (``overrides``).
    """

    def __init__(self, split: Sized, num_replicas: int = 1, rank: int = 0):
        super().__init__(split, num_replicas=num_replicas, rank=rank, shuffle=False)
        self.num_samples = len(range(rank, len(split), num_replicas))  # no padding
        self.total_size = len(split)

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.rank, self.total_size, self.num_replicas))


class EpochShuffle(DistributedSampler):
    """The training order: a random order of the whole split that is a pure function of
    ``(seed, epoch)``, dealt out to the ranks.

    Epoch e's order is ``randperm`` from the stream ``(seed, "shuffle", e)``, padded by
    repeating its first indices to a multiple of ``num_replicas`` as ``DistributedSampler``
    pads, so that every rank has the same number of batches and the ranks step together;
    rank r takes positions ``r::num_replicas``. One process (the default) takes the whole
    order, unpadded.

    **The epoch is this sampler's own count.** :meth:`resume` sets it from the optimizer
    step a run resumes at, and each iteration moves it on by one. Lightning's
    ``set_epoch`` is ignored on purpose: Lightning passes its epoch counter, which a
    checkpoint written after the fit loop closed holds already advanced (the run's last
    epoch then counts as done though it stopped inside it), so it could disagree with the
    epoch the batches trained so far lie in; and the global step alone says where those
    batches end.
    """

    def __init__(self, num_examples: int, seed: int, num_replicas: int = 1, rank: int = 0):
        super().__init__(
            range(num_examples), num_replicas=num_replicas, rank=rank, shuffle=True, seed=seed
        )
        self.skip = 0  # indices of the next epoch that were already trained

    def resume(self, global_step: int, accumulate_grad_batches: int, batch_size: int) -> None:
        """Start at the first batch a run at ``global_step`` has not trained yet.

        Every epoch has the same number of batches per rank, and its last batch always
        steps the optimizer even when fewer than ``accumulate_grad_batches`` were
        accumulated (Lightning's rule), so an epoch is ``ceil(batches / accumulate)``
        optimizer steps and the position follows from the step count alone.
        """
        batches = -(-self.num_samples // batch_size)  # per rank and epoch
        steps = -(-batches // accumulate_grad_batches)  # optimizer steps per epoch
        self.epoch, step = divmod(global_step, steps)
        self.skip = step * accumulate_grad_batches * batch_size

    def set_epoch(self, epoch: int) -> None:
        """Ignored: the epoch is this sampler's own count (see the class docstring)."""

    def epoch_order(self, stream: torch.Generator) -> torch.Tensor:
        """The epoch's order of the whole split ``[N]``, drawn from ``stream``."""
        return torch.randperm(len(self.dataset), generator=stream)

    def __iter__(self) -> Iterator[int]:
        stream = random_stream(self.seed, "shuffle", self.epoch)
        order = self.epoch_order(stream)  # [N]
        repeats = -(-self.total_size // len(order))
        padded = order.repeat(repeats)[: self.total_size]  # [num_samples * num_replicas]
        share = padded[self.rank :: self.num_replicas]  # [num_samples]
        self.epoch += 1
        start, self.skip = self.skip, 0
        return iter(share[start:].tolist())
