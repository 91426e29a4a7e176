"""The LightningDataModule for the synthetic tasks: held-out splits, served as batches.

Design choices, and why:

- **Held out for real.** Every source sequence in the data module is distinct, so a
  val/test source has never been seen in training, and measured accuracy is
  generalisation, not recall. The splits are drawn in layers (train, then val excluding
  train, then test excluding both), so train never depends on the held-out sizes, and
  a test split of another size (``evaluate data.test_size=...``) is still disjoint from
  the run's train and val. When the space of sequences is too small for the requested
  sizes, ``__init__`` says so instead of looping or silently duplicating.
- **Deterministic from ``seed`` alone.** Generation and the shuffle draw from named
  random streams of ``seed`` (:mod:`.streams`), so rerunning a saved config rebuilds
  identical splits and identical batch orders, whatever else the run seeds or draws.
- **Counted once under DDP.** Each process evaluates its own shard of
  val/test without the repeats Lightning's padding sampler adds (which the summed metrics
  would count), and trains on its share of the epoch's one order (:mod:`.sampler`).
- **Never the bottleneck.** Each split is generated with a handful of tensor ops
  (:mod:`.generation`), stored pre-padded, and a batch is served by fancy indexing
  (:class:`.Split`), trimmed to its longest row so short batches stay short.

The settings live in ``self.hparams`` (saved for checkpoints) and are read from there.
"""

import lightning
from lightning.fabric.utilities.data import AttributeDict
from torch.utils.data import DataLoader, Sampler

from transformer_lab.config.validation import InvalidSetting, check_choice, check_integer
from transformer_lab.data.generation import generate, num_sequences
from transformer_lab.data.sampler import EpochShuffle, EvalShard
from transformer_lab.data.split import Batch, Split, collate
from transformer_lab.data.streams import random_stream
from transformer_lab.data.tasks import TASKS
from transformer_lab.tokens import FIRST_CONTENT

# The splits of lengths min_len..max_len, in the order they are drawn: each excludes the
# sources of those before it.
DRAW_ORDER = ("train", "val", "test")


class SyntheticDataModule(lightning.LightningDataModule):
    """Train/val/test (and optionally test_long) splits of one synthetic task.

    ``vocab_size`` counts every id including the specials, so content ids are
    ``FIRST_CONTENT .. vocab_size - 1``. Source lengths (words, before EOS) are uniform in
    ``min_len..max_len``; the optional ``test_long`` split has lengths uniform in
    ``max_len + 1..test_long_max_len`` to measure length generalisation. A length with
    fewer distinct sequences than its uniform share is used up entirely and the rest
    spread over the other lengths (see :func:`.generation.length_counts`).
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
        # logger=False: the run logs the whole flattened config itself; a merge with the
        # module's hparams would clash on max_len, which means different things in each.
        self.save_hyperparameters(logger=False)
        _check_settings(self.hparams)
        _check_room(self.hparams)
        self._splits: dict[str, Split] | None = None

    # Read by evaluate and the config tests; batch_size is also set by evaluate.
    @property
    def max_len(self) -> int:
        return self.hparams.max_len

    @property
    def test_long_max_len(self) -> int:
        return self.hparams.test_long_max_len

    @property
    def batch_size(self) -> int:
        return self.hparams.batch_size

    @batch_size.setter
    def batch_size(self, value: int) -> None:
        self.hparams.batch_size = value

    @property
    def src_vocab_size(self) -> int:
        return self.hparams.vocab_size

    @property
    def tgt_vocab_size(self) -> int:
        return self.hparams.vocab_size

    @property
    def max_seq_len(self) -> int:
        """The longest ``src``/``tgt_in``/``tgt_out`` of any split (EOS/BOS included)."""
        hp = self.hparams
        return (hp.test_long_max_len if hp.test_long_size > 0 else hp.max_len) + 1

    def missing_positions(self, model_max_len: int) -> int:
        """How many positions a model with ``model_max_len`` of them lacks for the longest
        sequence of any split; 0 when it holds them all. Training and evaluation each name
        the setting that would fix it (``model.max_len``, ``data.test_long_max_len``)."""
        return max(0, self.max_seq_len - model_max_len)

    @property
    def test_split_names(self) -> list[str]:
        """Names of the test splits, in the order of :meth:`test_dataloader`'s loaders."""
        return ["test", "test_long"] if self.hparams.test_long_size > 0 else ["test"]

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
        hp = self.hparams
        task, num_words = TASKS[hp.task], hp.vocab_size - FIRST_CONTENT
        # Drawn in layers, each from its own stream and excluding the sources of the splits
        # before it: train depends on its own size alone and val on train's, so changing
        # test_size (a sweep, or evaluate) leaves train and val as they were.
        space = (num_words, hp.min_len, hp.max_len)
        splits, sources = {}, []
        for name in DRAW_ORDER:
            stream = random_stream(hp.seed, name)
            splits[name] = Split(name, *generate(task, hp[f"{name}_size"], *space, stream, sources))
            sources.append(splits[name].src)
        if hp.test_long_size > 0:
            long = generate(
                task,
                hp.test_long_size,
                num_words,
                hp.max_len + 1,
                hp.test_long_max_len,
                random_stream(hp.seed, "test_long"),
            )
            splits["test_long"] = Split("test_long", *long)
        self._splits = splits

    def _ranks(self) -> tuple[int, int]:
        """``(num_replicas, rank)`` of this process: ``(1, 0)`` unless a distributed trainer
        runs it. The samplers shard by these themselves, so Lightning adds none of its own."""
        trainer = self.trainer
        kwargs = trainer.distributed_sampler_kwargs if trainer is not None else None
        return (kwargs["num_replicas"], kwargs["rank"]) if kwargs else (1, 0)

    def _loader(self, split: Split, sampler: Sampler[int]) -> DataLoader:
        num_workers = self.hparams.num_workers
        return DataLoader(
            split,
            batch_size=self.batch_size,
            sampler=sampler,
            drop_last=False,
            collate_fn=collate,
            num_workers=num_workers,
            pin_memory=False,
            persistent_workers=num_workers > 0,
            # A loader without a generator draws its workers' base seed from the global RNG
            # each time it is iterated, which would shift dropout's random stream by a call
            # whenever a resumed run iterates a loader the original run did not.
            generator=random_stream(self.hparams.seed, "loader"),
        )

    def train_dataloader(self) -> DataLoader:
        """Shuffled per epoch, this rank's share; after a resume, positioned at the first
        batch not yet trained (from the restored ``global_step``, see
        :meth:`.EpochShuffle.resume`)."""
        train = self.splits["train"]
        sampler = EpochShuffle(len(train), self.hparams.seed, *self._ranks())
        trainer = self.trainer
        if trainer is not None:
            sampler.resume(trainer.global_step, trainer.accumulate_grad_batches, self.batch_size)
        return self._loader(train, sampler)

    def _eval_loader(self, name: str) -> DataLoader:
        """``name``'s examples in order, this rank's shard of them without repeats.

        Every rank needs at least one example: DDP syncs buffers at a rank's first
        evaluation batch, so a rank with none would leave the others waiting.
        """
        split, (num_replicas, rank) = self.splits[name], self._ranks()
        if len(split) < num_replicas:
            raise InvalidSetting(
                f"data.{name}_size",
                len(split),
                f"fewer examples than the {num_replicas} processes that evaluate them",
                f"data.{name}_size >= {num_replicas}, or fewer trainer.devices",
            )
        return self._loader(split, EvalShard(split, num_replicas, rank))

    def val_dataloader(self) -> DataLoader:
        return self._eval_loader("val")

    def test_dataloader(self) -> DataLoader | list[DataLoader]:
        """The test loader, or ``[test, test_long]`` (see :attr:`test_split_names`)."""
        loaders = [self._eval_loader(name) for name in self.test_split_names]
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


def _check_settings(hp: AttributeDict) -> None:
    """InvalidSetting for the first setting of the wrong type or out of its range."""
    check_choice("task", hp.task, sorted(TASKS))
    # it counts the special ids (PAD, BOS, EOS) too; at least one content id must remain
    check_integer("vocab_size", hp.vocab_size, minimum=FIRST_CONTENT + 1)
    check_integer("min_len", hp.min_len, minimum=1)
    check_integer("max_len", hp.max_len, minimum=1)
    if hp.min_len > hp.max_len:
        raise InvalidSetting("min_len", hp.min_len, f"above max_len={hp.max_len}", "<= max_len")
    for name in ("train_size", "val_size", "test_size", "batch_size"):
        check_integer(name, hp[name], minimum=1)
    check_integer("num_workers", hp.num_workers, minimum=0)  # 0: load in the main process
    check_integer("test_long_size", hp.test_long_size, minimum=0)  # 0: no test_long split
    check_integer("test_long_max_len", hp.test_long_max_len, minimum=0)
    if hp.test_long_size > 0 and hp.test_long_max_len <= hp.max_len:
        raise InvalidSetting(
            "test_long_max_len",
            hp.test_long_max_len,
            f"not above max_len={hp.max_len}, but test_long_size={hp.test_long_size} asks "
            "for sources longer than any seen in training",
            f"test_long_max_len > {hp.max_len}, or test_long_size=0",
        )
    check_integer("seed", hp.seed, minimum=0)


def _check_room(hp: AttributeDict) -> None:
    """InvalidSetting unless the lengths hold as many distinct sources as the splits ask.

    The splits are drawn one after the other (:data:`DRAW_ORDER`), each excluding the
    sources of those before it, so each has room for what the earlier ones left.
    """
    num_words = hp.vocab_size - FIRST_CONTENT
    available = num_sequences(num_words, hp.min_len, hp.max_len)
    space = (
        f"vocab_size={hp.vocab_size} ({num_words} content ids) with lengths "
        f"{hp.min_len}..{hp.max_len} has {available} distinct sequences"
    )
    earlier, taken = [], 0
    for name in DRAW_ORDER:
        size = hp[f"{name}_size"]
        if size > available - taken:
            held = f", {taken} of them in {' and '.join(earlier)}, which {name} never repeats"
            raise InvalidSetting(
                f"{name}_size",
                size,
                f"more distinct {name} sources than there are: {space}{held if earlier else ''}",
                f"{name}_size <= {available - taken}, or a larger vocab_size or max_len",
            )
        earlier.append(name)
        taken += size
    if hp.test_long_size > 0:
        available = num_sequences(num_words, hp.max_len + 1, hp.test_long_max_len)
        if hp.test_long_size > available:
            raise InvalidSetting(
                "test_long_size",
                hp.test_long_size,
                f"more distinct sources than vocab_size={hp.vocab_size} ({num_words} content "
                f"ids) with lengths {hp.max_len + 1}..{hp.test_long_max_len} has: only "
                f"{available} distinct sequences",
                f"test_long_size <= {available}, or a larger test_long_max_len",
            )
