"""The LightningDataModule for the synthetic tasks: held-out splits, padding, the shift.

One example, for source words ``w`` and target ``t = task(w)`` (all content ids)::

    src     = w + [EOS]            # what the encoder reads
    tgt_in  = [BOS] + t            # what the decoder reads (teacher forcing)
    tgt_out = t + [EOS]            # what the decoder must predict at each position

so ``tgt_in[i + 1] == tgt_out[i]``; rows are right-padded with ``PAD`` and the loss
ignores ``PAD`` labels.

Design choices, and why:

- **Held out for real.** Every source sequence in the data module is distinct, so a
  val/test source has never been seen in training, and measured accuracy is
  generalisation, not recall. When the space of sequences is too small for the
  requested sizes, ``__init__`` says so instead of looping or silently duplicating.
- **Deterministic from ``seed`` alone.** Generation and the shuffle use their own
  ``torch.Generator``s derived from ``seed`` (never the global RNG), so rerunning a saved
  config rebuilds identical splits and identical batch orders, whatever else the run
  seeds or draws.
- **Never the bottleneck.** Each split is generated with a handful of tensor ops,
  stored pre-padded, and a batch is served by fancy indexing in ``__getitems__`` (the
  DataLoader's batched fetch), trimmed to its longest row so short batches stay short.
"""

import hashlib
from collections.abc import Callable, Iterator, Sequence

import lightning
import torch
from torch.utils.data import DataLoader, Dataset, Sampler

from transformer_lab.data.tasks import TASKS
from transformer_lab.tokens import BOS, EOS, FIRST_CONTENT, PAD

Batch = dict[str, torch.Tensor]


def _generator(seed: int, *stream: object) -> torch.Generator:
    """A ``torch.Generator`` for one named random stream of ``seed``.

    Separate streams keep draws independent of each other: turning on the ``test_long``
    split does not change train/val/test, and epoch k's shuffle does not depend on how
    many epochs ran before it (so a resumed run sees the same order).
    """
    key = "/".join(str(part) for part in (seed, *stream)).encode()
    digest = hashlib.blake2b(key, digest_size=8).digest()
    return torch.Generator().manual_seed(int.from_bytes(digest, "little"))


def collate(batch: Batch) -> Batch:
    """Return the batch as is: :meth:`Split.__getitems__` already built it.

    Defined at module level (not a lambda) so DataLoader workers can pickle it.
    """
    return batch


class Split(Dataset):
    """One split, stored pre-padded so that a batch costs three indexing ops.

    ``src [N, S]``, ``tgt_in [N, T]``, ``tgt_out [N, T]`` are right-padded with ``PAD``;
    ``src_len [N]`` and ``tgt_len [N]`` count the real tokens of each row (EOS/BOS
    included), which is what trimming a batch to its longest row needs.
    """

    def __init__(self, name: str, src: torch.Tensor, tgt_in: torch.Tensor, tgt_out: torch.Tensor):
        self.name = name
        self.src_len = (src != PAD).sum(dim=1)  # [N]
        self.tgt_len = (tgt_out != PAD).sum(dim=1)  # [N]
        width_src = int(self.src_len.max()) if len(src) else 0
        width_tgt = int(self.tgt_len.max()) if len(src) else 0
        self.src = src[:, :width_src].contiguous()  # [N, S]
        self.tgt_in = tgt_in[:, :width_tgt].contiguous()  # [N, T]
        self.tgt_out = tgt_out[:, :width_tgt].contiguous()  # [N, T]

    def __len__(self) -> int:
        return len(self.src)

    def __getitem__(self, index: int) -> Batch:
        """One example as 1-D tensors without padding (for inspection; loaders batch)."""
        s, t = int(self.src_len[index]), int(self.tgt_len[index])
        return {
            "src": self.src[index, :s],  # [s]
            "tgt_in": self.tgt_in[index, :t],  # [t]
            "tgt_out": self.tgt_out[index, :t],  # [t]
        }

    def __getitems__(self, indices: Sequence[int]) -> Batch:
        """The rows ``indices`` as one batch, trimmed to the longest row in it."""
        rows = torch.as_tensor(indices, dtype=torch.long)  # [B]
        s, t = int(self.src_len[rows].max()), int(self.tgt_len[rows].max())
        return {
            "src": self.src[rows, :s],  # [B, S]
            "tgt_in": self.tgt_in[rows, :t],  # [B, T]
            "tgt_out": self.tgt_out[rows, :t],  # [B, T]
        }


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
            self.num_samples, generator=_generator(self.seed, "shuffle", self.epoch)
        )
        self.epoch += 1
        start, self.skip = self.skip, 0
        return iter(order[start:].tolist())


def _num_sequences(num_words: int, min_len: int, max_len: int) -> int:
    """How many distinct word sequences have a length in ``min_len..max_len``."""
    return sum(num_words**length for length in range(min_len, max_len + 1))


def _length_counts(
    total: int, num_words: int, min_len: int, max_len: int, generator: torch.Generator
) -> list[int]:
    """How many examples of each length ``min_len..max_len``: uniform draws.

    A short length can have fewer distinct sequences than its uniform share (16 ids at
    length 3 give 13**3 = 2197); it is then used up entirely and its overflow is drawn
    uniformly over the lengths that still have room. Needs ``total`` <= the number of
    distinct sequences (checked in ``__init__``). Every round fills at least one length
    for good, so this ends within ``max_len - min_len + 2`` rounds.
    """
    capacity = [num_words**length for length in range(min_len, max_len + 1)]
    draws = torch.randint(len(capacity), (total,), generator=generator)  # [total]
    counts = torch.bincount(draws, minlength=len(capacity)).tolist()
    while overflow := sum(max(0, c - cap) for c, cap in zip(counts, capacity, strict=True)):
        counts = [min(c, cap) for c, cap in zip(counts, capacity, strict=True)]
        room = [i for i, (c, cap) in enumerate(zip(counts, capacity, strict=True)) if c < cap]
        draws = torch.randint(len(room), (overflow,), generator=generator)
        for i, extra in zip(room, torch.bincount(draws, minlength=len(room)).tolist(), strict=True):
            counts[i] += extra
    return counts


def _first_occurrences(rows: torch.Tensor) -> torch.Tensor:
    """``rows [N, L]`` without repeated rows, keeping each row's first occurrence in order.

    Order matters: ``torch.unique`` sorts, and taking the first k of a sorted set would
    favour lexicographically small sequences.
    """
    _, inverse = torch.unique(rows, dim=0, return_inverse=True)  # [N]
    first = torch.full((int(inverse.max()) + 1,), len(rows), dtype=torch.long)
    first.scatter_reduce_(0, inverse, torch.arange(len(rows)), reduce="amin")
    return rows[first.sort().values]


def _distinct_words(
    count: int, length: int, num_words: int, generator: torch.Generator
) -> torch.Tensor:
    """``count`` distinct uniformly random word sequences of ``length``: ``[count, length]``."""
    capacity = num_words**length
    if capacity <= 2 * count:
        # Dense: sample sequence numbers without replacement, then write them in base
        # num_words. capacity <= 2 * count keeps the permutation dataset-sized.
        numbers = torch.randperm(capacity, generator=generator)[:count]  # [count]
        place = num_words ** torch.arange(length - 1, -1, -1)  # [length]
        return numbers[:, None] // place % num_words + FIRST_CONTENT
    # Sparse: draw with replacement and drop repeats; at least half of all sequences are
    # still free, so each round keeps at least half its draws on average.
    rows = torch.empty(0, length, dtype=torch.long)
    while len(rows) < count:
        draws = torch.randint(
            num_words, (2 * (count - len(rows)) + 64, length), generator=generator
        )
        rows = _first_occurrences(torch.cat([rows, draws]))
    return rows[:count] + FIRST_CONTENT


def _generate(
    task: Callable[[torch.Tensor], torch.Tensor],
    count: int,
    num_words: int,
    min_len: int,
    max_len: int,
    generator: torch.Generator,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``count`` distinct examples in random order: ``src``, ``tgt_in``, ``tgt_out``.

    Each is ``[count, longest + 1]``, right-padded. Examples are made one length at a
    time, so the task maps a whole ``[n, L]`` block in one call.
    """
    counts = _length_counts(count, num_words, min_len, max_len, generator)
    blocks = [
        _distinct_words(n, length, num_words, generator)  # [n, length]
        for n, length in zip(counts, range(min_len, max_len + 1), strict=True)
        if n > 0
    ]
    targets = [task(words) for words in blocks]  # each [n, length_t]
    width_src = max(words.shape[1] for words in blocks) + 1
    width_tgt = max(target.shape[1] for target in targets) + 1
    src = torch.full((count, width_src), PAD, dtype=torch.long)  # [N, S]
    tgt_in = torch.full((count, width_tgt), PAD, dtype=torch.long)  # [N, T]
    tgt_out = torch.full((count, width_tgt), PAD, dtype=torch.long)  # [N, T]
    start = 0
    for words, target in zip(blocks, targets, strict=True):
        n, length_src = words.shape
        length_tgt = target.shape[1]
        rows = slice(start, start + n)
        src[rows, :length_src] = words
        src[rows, length_src] = EOS
        tgt_in[rows, 0] = BOS
        tgt_in[rows, 1 : length_tgt + 1] = target
        tgt_out[rows, :length_tgt] = target
        tgt_out[rows, length_tgt] = EOS
        start += n
    order = torch.randperm(count, generator=generator)  # [N]
    return src[order], tgt_in[order], tgt_out[order]


class SyntheticDataModule(lightning.LightningDataModule):
    """Train/val/test (and optionally test_long) splits of one synthetic task.

    ``vocab_size`` counts every id including the specials, so content ids are
    ``FIRST_CONTENT .. vocab_size - 1``. Source lengths (words, before EOS) are uniform in
    ``min_len..max_len``; the optional ``test_long`` split has lengths uniform in
    ``max_len + 1..test_long_max_len`` to measure length generalisation. A length with
    fewer distinct sequences than its uniform share is used up entirely and the rest
    spread over the other lengths (see :func:`_length_counts`).
    """

    def __init__(
        self,
        task: str = "reverse",
        vocab_size: int = 16,
        min_len: int = 3,
        max_len: int = 10,
        train_size: int = 20000,
        val_size: int = 500,
        test_size: int = 500,
        test_long_size: int = 0,
        test_long_max_len: int = 0,
        batch_size: int = 64,
        seed: int = 0,
        num_workers: int = 0,
    ):
        super().__init__()
        if task not in TASKS:
            raise ValueError(f"task={task!r} is unknown; choose one of {sorted(TASKS)}")
        if vocab_size < FIRST_CONTENT + 1:
            raise ValueError(
                f"vocab_size={vocab_size} is too small: it counts the {FIRST_CONTENT} special "
                f"ids (PAD, BOS, EOS), so it must be >= {FIRST_CONTENT + 1} to leave at least "
                "one content id"
            )
        if min_len < 1:
            raise ValueError(f"min_len={min_len} must be >= 1")
        if min_len > max_len:
            raise ValueError(f"min_len={min_len} must be <= max_len={max_len}")
        for name, value in [
            ("train_size", train_size),
            ("val_size", val_size),
            ("test_size", test_size),
            ("batch_size", batch_size),
        ]:
            if value < 1:
                raise ValueError(f"{name}={value} must be a positive integer (>= 1)")
        if num_workers < 0:
            raise ValueError(
                f"num_workers={num_workers} must be >= 0 (0 loads in the main process)"
            )
        if test_long_size < 0:
            raise ValueError(
                f"test_long_size={test_long_size} must be >= 0 (0 disables the test_long split)"
            )
        if test_long_size > 0 and test_long_max_len <= max_len:
            raise ValueError(
                f"test_long_max_len={test_long_max_len} must be > max_len={max_len} when "
                f"test_long_size={test_long_size} > 0: test_long holds sources longer than any "
                "seen in training"
            )
        num_words = vocab_size - FIRST_CONTENT
        requested = train_size + val_size + test_size
        available = _num_sequences(num_words, min_len, max_len)
        if requested > available:
            raise ValueError(
                f"train_size + val_size + test_size = {train_size} + {val_size} + {test_size} = "
                f"{requested} distinct sources requested, but vocab_size={vocab_size} "
                f"({num_words} content ids) with lengths {min_len}..{max_len} has only "
                f"{available} distinct sequences; lower the sizes or raise vocab_size/max_len"
            )
        if test_long_size > 0:
            available = _num_sequences(num_words, max_len + 1, test_long_max_len)
            if test_long_size > available:
                raise ValueError(
                    f"test_long_size={test_long_size} distinct sources requested, but "
                    f"vocab_size={vocab_size} ({num_words} content ids) with lengths "
                    f"{max_len + 1}..{test_long_max_len} has only {available} distinct "
                    "sequences; lower test_long_size or raise test_long_max_len"
                )
        # logger=False: the run logs the whole flattened config itself; a merge with the
        # module's hparams would clash on max_len, which means different things in each.
        self.save_hyperparameters(logger=False)
        self.task = task
        self.vocab_size = vocab_size
        self.min_len = min_len
        self.max_len = max_len
        self.train_size = train_size
        self.val_size = val_size
        self.test_size = test_size
        self.test_long_size = test_long_size
        self.test_long_max_len = test_long_max_len
        self.batch_size = batch_size
        self.seed = seed
        self.num_workers = num_workers
        self._splits: dict[str, Split] | None = None

    @property
    def src_vocab_size(self) -> int:
        return self.vocab_size

    @property
    def tgt_vocab_size(self) -> int:
        return self.vocab_size

    @property
    def max_seq_len(self) -> int:
        """The longest ``src``/``tgt_in``/``tgt_out`` of any split (EOS/BOS included)."""
        longest = self.test_long_max_len if self.test_long_size > 0 else self.max_len
        return longest + 1

    @property
    def test_split_names(self) -> list[str]:
        """Names of the test splits, in the order of :meth:`test_dataloader`'s loaders."""
        return ["test", "test_long"] if self.test_long_size > 0 else ["test"]

    @property
    def splits(self) -> dict[str, Split]:
        """``{"train", "val", "test"[, "test_long"]}`` -> :class:`Split`, generated on first use."""
        self.setup()
        assert self._splits is not None
        return self._splits

    def setup(self, stage: str | None = None) -> None:
        """Generate every split once; later calls (one per stage) are no-ops."""
        if self._splits is not None:
            return
        task = TASKS[self.task]
        num_words = self.vocab_size - FIRST_CONTENT
        sizes = {"train": self.train_size, "val": self.val_size, "test": self.test_size}
        # One pool of distinct sources cut into the splits: that is what makes them disjoint.
        pool = _generate(
            task,
            sum(sizes.values()),
            num_words,
            self.min_len,
            self.max_len,
            _generator(self.seed, "data"),
        )
        splits = {}
        start = 0
        for name, size in sizes.items():
            splits[name] = Split(name, *(part[start : start + size] for part in pool))
            start += size
        if self.test_long_size > 0:
            long = _generate(
                task,
                self.test_long_size,
                num_words,
                self.max_len + 1,
                self.test_long_max_len,
                _generator(self.seed, "test_long"),
            )
            splits["test_long"] = Split("test_long", *long)
        self._splits = splits

    def _loader(self, split: Split, sampler: Sampler[int] | None = None) -> DataLoader:
        return DataLoader(
            split,
            batch_size=self.batch_size,
            sampler=sampler,  # None: in order
            drop_last=False,
            collate_fn=collate,
            num_workers=self.num_workers,
            pin_memory=False,
            persistent_workers=self.num_workers > 0,
            # A loader without a generator draws its workers' base seed from the global RNG
            # each time it is iterated, which would shift dropout's random stream by a call
            # whenever a resumed run iterates a loader the original run did not.
            generator=_generator(self.seed, "loader"),
        )

    def train_dataloader(self) -> DataLoader:
        """Shuffled per epoch; after a resume, positioned at the first batch not yet trained.

        Lightning restores the step counter before it asks for this loader, and every epoch
        has the same number of batches, so the position follows from ``global_step`` alone
        (one batch per optimizer step times ``accumulate_grad_batches``).
        """
        train = self.splits["train"]
        sampler = EpochShuffle(len(train), self.seed)
        trainer = self.trainer
        if trainer is not None and trainer.global_step > 0:
            per_epoch = -(-len(train) // self.batch_size)
            batches_done = trainer.global_step * trainer.accumulate_grad_batches
            sampler.skip = (batches_done - trainer.current_epoch * per_epoch) % per_epoch
            sampler.skip *= self.batch_size
        return self._loader(train, sampler)

    def val_dataloader(self) -> DataLoader:
        return self._loader(self.splits["val"])

    def test_dataloader(self) -> DataLoader | list[DataLoader]:
        """The test loader, or ``[test, test_long]`` (see :attr:`test_split_names`)."""
        loaders = [self._loader(self.splits[name]) for name in self.test_split_names]
        return loaders if len(loaders) > 1 else loaders[0]

    def sample(self, split: str, n: int) -> Batch:
        """The first ``n`` examples of ``split`` as one batch (fewer if the split is smaller).

        Always the same examples for a given seed, so sample generations logged across
        epochs and runs are comparable.
        """
        if split not in self.splits:
            raise ValueError(f"split={split!r} is unknown; choose one of {list(self.splits)}")
        if n < 1:
            raise ValueError(f"n={n} must be >= 1")
        data = self.splits[split]
        return data.__getitems__(range(min(n, len(data))))
