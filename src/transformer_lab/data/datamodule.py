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
- **Never the bottleneck.** Each split is generated with a handful of tensor ops
  (:mod:`.generation`); serving it (pre-padded, DDP shards, the resumable shuffle) is
  :class:`~.serving.SplitsDataModule`'s.

The settings live in ``self.hparams`` (saved for checkpoints) and are read from there.
"""

from lightning.fabric.utilities.data import AttributeDict

from transformer_lab.config.validation import check_choice, check_integer
from transformer_lab.data.codec import NumberCodec
from transformer_lab.data.generation import generate, num_sequences
from transformer_lab.data.serving import SplitsDataModule
from transformer_lab.data.split import Split
from transformer_lab.data.split_settings import (
    DRAW_ORDER,
    TEST_SPLIT_SETTINGS,
    check_room,
    check_task_lengths,
    longest_task_len,
)
from transformer_lab.data.streams import random_stream
from transformer_lab.data.tasks import TASKS
from transformer_lab.tokens import FIRST_CONTENT


class SyntheticDataModule(SplitsDataModule):
    """Train/val/test (and optionally test_long) splits of one synthetic task.

    ``vocab_size`` counts every id including the specials, so content ids are
    ``FIRST_CONTENT .. vocab_size - 1``. Source lengths (words, before EOS) are uniform in
    ``min_task_len..max_task_len``; the optional ``test_long`` split has lengths uniform in
    ``max_task_len + 1..test_long_max_task_len`` to measure length generalisation. The
    split settings (sizes, batch, seed, workers) are :class:`.SplitSettings`'. A length with
    fewer distinct sequences than its uniform share is used up entirely and the rest
    spread over the other lengths (see :func:`.generation.length_counts`).
    """

    evaluation_settings = TEST_SPLIT_SETTINGS

    def __init__(
        self,
        task: str = "reverse",
        vocab_size: int = 16,
        min_task_len: int = 3,
        max_task_len: int = 10,
        test_long_size: int = 0,
        test_long_max_task_len: int = 0,
        **splits,
    ):
        super().__init__()
        # logger=False: the run logs the whole flattened config itself
        self.save_hyperparameters(logger=False)
        self.save_split_settings(splits)
        _check_settings(self.hparams)
        _check_room(self.hparams)
        self._splits: dict[str, Split] | None = None
        # the words are the content ids, printed as numbers; source and target share them
        self.src_codec = self.tgt_codec = NumberCodec(vocab_size)

    @property
    def max_seq_len(self) -> int:
        """The longest ``src``/``tgt_in``/``tgt_out`` of any split (EOS/BOS included): the
        longest source's words or the longest target the task makes of a source of any
        length drawn (:meth:`.tasks.Task.target_length`), and EOS (BOS on the target)."""
        hp, task = self.hparams, TASKS[self.hparams.task]
        lengths = range(hp.min_task_len, longest_task_len(hp) + 1)
        return max(max(lengths), *(task.target_length(n) for n in lengths)) + 1

    def setup(self, stage: str | None = None) -> None:
        """Generate every split once; later calls (one per stage) are no-ops."""
        if self._splits is not None:
            return
        hp = self.hparams
        task, num_words = TASKS[hp.task].apply, hp.vocab_size - FIRST_CONTENT
        # Drawn in layers, each from its own stream and excluding the sources of the splits
        # before it: train depends on its own size alone and val on train's, so changing
        # test_size (a sweep, or evaluate) leaves train and val as they were.
        space = (num_words, hp.min_task_len, hp.max_task_len)
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
                hp.max_task_len + 1,
                hp.test_long_max_task_len,
                random_stream(hp.seed, "test_long"),
            )
            splits["test_long"] = Split("test_long", *long)
        self._splits = splits


def _check_settings(hp: AttributeDict) -> None:
    """InvalidSetting for the first setting of the wrong type or out of its range."""
    check_choice("task", hp.task, sorted(TASKS))
    # it counts the special ids (PAD, BOS, EOS) too; at least one content id must remain
    check_integer("vocab_size", hp.vocab_size, minimum=FIRST_CONTENT + 1)
    check_task_lengths(hp)


def _check_room(hp: AttributeDict) -> None:
    """InvalidSetting unless the lengths hold as many distinct word sequences as the
    splits ask (:func:`.split_settings.check_room`)."""
    num_words = hp.vocab_size - FIRST_CONTENT
    check_room(
        hp,
        lambda low, high: num_sequences(num_words, low, high),
        lambda low, high: (
            f"vocab_size={hp.vocab_size} ({num_words} content ids) with lengths {low}..{high}"
        ),
        "vocab_size or max_task_len",
    )
