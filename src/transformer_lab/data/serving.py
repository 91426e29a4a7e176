"""What every datamodule of the project does with its splits once it has them: serve them.

A subclass makes the splits (:meth:`SplitsDataModule.setup` fills ``self._splits`` with
:class:`~transformer_lab.data.split.Split`\\ s: ``train``, ``val``, ``test`` and maybe
``test_long``) and says how its ids read as text (``src_codec``, ``tgt_codec``, see
:mod:`.codec`); this class serves them, the same way for every task:

- **Counted once under DDP.** Each process evaluates its own shard of val/test without
  the repeats Lightning's padding sampler adds (which the summed metrics would count), and
  trains on its share of the epoch's one order (:mod:`.sampler`).
- **Resumed where it stopped.** The training order is a pure function of ``(seed, epoch)``,
  positioned after a resume at the first batch not yet trained.
- **Never the bottleneck.** Splits are stored pre-padded and a batch is served by fancy
  indexing, trimmed to its longest row.

The subclass's settings live in ``self.hparams`` (saved for checkpoints, so that
``load_from_checkpoint`` rebuilds it): its task's own, and the split settings every
datamodule shares (:class:`~.split_settings.SplitSettings`, :meth:`save_split_settings`),
of which ``seed``, ``batch_size`` and ``num_workers`` are read here.
"""

import inspect
from pathlib import Path
from typing import ClassVar

import lightning
from torch.utils.data import DataLoader, Sampler

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.data.codec import Codec
from transformer_lab.data.sampler import EpochShuffle, EvalShard
from transformer_lab.data.split import Batch, Split, collate
from transformer_lab.data.split_settings import SplitSettings
from transformer_lab.data.streams import random_stream


class SplitsDataModule(lightning.LightningDataModule):
    """The loaders, samples and checkpoint state shared by every datamodule."""

    src_codec: Codec
    tgt_codec: Codec
    _splits: dict[str, Split] | None = None
    # settings the run learns from its data (a tokenizer), which a resume takes from the
    # checkpoint instead of learning them again (job/resume.py)
    learned_settings: tuple[str, ...] = ()
    # whether the batches carry rows of reference texts (TextSplit), scored by BLEU and chrF
    reports_text = False
    # the settings of the test splits that evaluate may change (data.<name>=...)
    evaluation_settings: tuple[str, ...] = ()
    # the files a run read, which evaluate may be given again where they moved to
    file_settings: tuple[str, ...] = ()
    # whether it takes the model's positions (model_positions), to keep only what fits them
    fits_model_positions = False
    # this data's own defaults of split settings, where the shared ones do not suit it
    split_defaults: ClassVar[dict[str, int | None]] = {}

    def save_split_settings(self, given: dict, fixed_set: bool = False) -> None:
        """Check the split settings the constructor was ``given`` (its ``**splits``) and
        save every one of them, given or default, beside the task's own settings (which
        ``save_hyperparameters`` saved). ``fixed_set``: see :meth:`.SplitSettings.check`."""
        cls = type(self)
        own = [name for name in inspect.signature(cls).parameters if name != "splits"]
        settings = SplitSettings.of(cls.__name__, own, {**self.split_defaults, **given})
        settings.check(fixed_set)
        self.hparams.update(settings.as_settings())

    @property
    def batch_size(self) -> int:
        return self.hparams.batch_size

    @batch_size.setter
    def batch_size(self, value: int) -> None:  # set by evaluate
        self.hparams.batch_size = value

    @property
    def src_vocab_size(self) -> int:
        return self.src_codec.vocab_size

    @property
    def tgt_vocab_size(self) -> int:
        return self.tgt_codec.vocab_size

    @property
    def max_seq_len(self) -> int:
        """The longest ``src``/``tgt_in``/``tgt_out`` of any split (EOS/BOS included)."""
        raise NotImplementedError

    def missing_positions(self, model_positions: int) -> int:
        """How many positions a model with ``model_positions`` of them (its ``max_len``)
        lacks for the longest sequence of any split; 0 when it holds them all."""
        return max(0, self.max_seq_len - model_positions)

    def changed_settings(self, changes: dict) -> dict:
        """The settings of this data with ``changes`` (evaluate's ``data.*``)."""
        return dict(self.hparams) | changes

    @property
    def test_split_names(self) -> list[str]:
        """Names of the test splits, in the order of :meth:`test_dataloader`'s loaders:
        ``test_long`` too where the data has one (``test_long_size > 0``)."""
        return ["test", "test_long"] if self.hparams.get("test_long_size", 0) > 0 else ["test"]

    @property
    def splits(self) -> dict[str, Split]:
        """Split name -> :class:`Split`, made on first use."""
        self.setup()
        assert self._splits is not None
        return self._splits

    def references(self, split: str, rows: list[int]) -> list[str]:
        """The reference texts of rows ``rows`` of ``split``, for BLEU and chrF: only a split
        whose batches carry a ``row`` (:class:`~.examples.TextSplit`) has them."""
        raise NotImplementedError(f"{type(self).__name__} has no reference texts")

    def save_tokenizers(self, folder: Path) -> list[Path]:
        """Write what turns the data's text into ids into ``folder`` (the run folder), and
        return the files: none for a task of fixed words."""
        return []

    def state_dict(self) -> dict:
        """What Lightning saves of the datamodule beside its settings: its class, so that
        evaluation rebuilds the right one (:data:`transformer_lab.data.DATAMODULES`)."""
        return {"class": type(self).__name__}

    def load_state_dict(self, state_dict: dict) -> None:
        """Nothing to restore: the settings rebuild everything."""

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

    def _train_sampler(self, train: Split) -> EpochShuffle:
        return EpochShuffle(len(train), self.hparams.seed, *self._ranks())

    def train_dataloader(self) -> DataLoader:
        """Shuffled per epoch, this rank's share; after a resume, positioned at the first
        batch not yet trained (from the restored ``global_step``, see
        :meth:`.EpochShuffle.resume`)."""
        train = self.splits["train"]
        sampler = self._train_sampler(train)
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
