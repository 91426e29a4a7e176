"""The research tasks as datamodules: addition, multi-query associative recall and SCAN.

Their examples are lists of words (:mod:`.addition`, :mod:`.recall`, :mod:`.scan`) whose
sources and targets differ in length, and for recall and SCAN in vocabulary; each task's
:class:`~.codec.WordCodec`\\ s give the ids, :func:`.examples.padded` the tensors, and
:class:`~.serving.SplitsDataModule` serves them like the synthetic tasks'.

Addition and recall are drawn like the synthetic tasks: distinct sources, held out in
layers (train, then val excluding train, then test excluding both, each from its own
random stream of ``seed``), lengths ``min_task_len..max_task_len`` (in the task's unit:
digits, key-value pairs) and an optional ``test_long`` split of lengths
``max_task_len + 1..test_long_max_task_len``. SCAN's 20,910 commands are a fixed set, cut
by its ``simple`` or ``length`` split, of which ``train_size``/``test_size`` take at most
that many (null: all). Every one takes the split settings of
:class:`~.split_settings.SplitSettings`. Nothing is generated before ``setup``.
"""

from collections.abc import Callable
from random import Random
from typing import ClassVar

from lightning.fabric.utilities.data import AttributeDict

from transformer_lab.config.validation import (
    InvalidSetting,
    check_choice,
    check_flag,
    check_integer,
)
from transformer_lab.data import addition, recall, scan
from transformer_lab.data.codec import WordCodec
from transformer_lab.data.examples import Example, padded
from transformer_lab.data.serving import SplitsDataModule
from transformer_lab.data.split import Split
from transformer_lab.data.split_settings import (
    DRAW_ORDER,
    TEST_SPLIT_SETTINGS,
    check_room,
    check_task_lengths,
    longest_task_len,
)
from transformer_lab.data.streams import python_random


class WordTaskDataModule(SplitsDataModule):
    """A task whose examples are words: subclasses give the examples of each split."""

    def examples(self) -> dict[str, list[Example]]:
        raise NotImplementedError

    def setup(self, stage: str | None = None) -> None:
        """Make and encode every split once; later calls are no-ops."""
        if self._splits is not None:
            return
        self._splits = {
            name: Split(
                name,
                *padded(
                    [self.src_codec.encode_words(source) for source, _ in examples],
                    [self.tgt_codec.encode_words(target) for _, target in examples],
                ),
            )
            for name, examples in self.examples().items()
        }


def draw_distinct(
    count: int, draw: Callable[[Random], Example], rng: Random, taken: set[tuple[str, ...]]
) -> list[Example]:
    """``count`` examples of distinct sources, none of them in ``taken`` (which gains them).
    The room is checked beforehand (:func:`.split_settings.check_room`), so this ends."""
    examples = []
    while len(examples) < count:
        source, target = draw(rng)
        if tuple(source) not in taken:
            taken.add(tuple(source))
            examples.append((source, target))
    return examples


class DrawnTaskDataModule(WordTaskDataModule):
    """Held-out splits of random examples of lengths ``min_task_len..max_task_len``, and the
    optional ``test_long``: subclasses say how to draw one example and how many sources
    there are."""

    name: str  # the task, naming its random streams
    evaluation_settings = TEST_SPLIT_SETTINGS

    def draw(self, rng: Random, shortest: int, longest: int) -> Example:
        raise NotImplementedError

    @property
    def longest_length(self) -> int:
        """The longest length of any split, in the task's own unit."""
        return longest_task_len(self.hparams)

    def examples(self) -> dict[str, list[Example]]:
        hp, taken, examples = self.hparams, set(), {}
        for split in DRAW_ORDER:

            def draw(rng: Random) -> Example:
                return self.draw(rng, hp.min_task_len, hp.max_task_len)

            rng = python_random(hp.seed, self.name, split)
            examples[split] = draw_distinct(hp[f"{split}_size"], draw, rng, taken)
        if hp.test_long_size > 0:

            def draw_long(rng: Random) -> Example:
                return self.draw(rng, hp.max_task_len + 1, hp.test_long_max_task_len)

            rng = python_random(hp.seed, self.name, "test_long")
            examples["test_long"] = draw_distinct(hp.test_long_size, draw_long, rng, set())
        return examples


class AdditionDataModule(DrawnTaskDataModule):
    """Two numbers to their sum, digit by digit (:mod:`.addition`). Task lengths are digits
    per operand: train/val/test ``min_task_len..max_task_len``, ``test_long`` past them."""

    name = "addition"
    split_defaults: ClassVar[dict[str, int | None]] = {"train_size": 50_000}

    def __init__(
        self,
        min_task_len: int = 1,
        max_task_len: int = 5,
        reversed_digits: bool = True,
        test_long_size: int = 1000,
        test_long_max_task_len: int = 8,
        **splits,
    ):
        super().__init__()
        self.save_hyperparameters(logger=False)
        self.save_split_settings(splits)
        check_task_lengths(self.hparams)
        check_flag("reversed_digits", reversed_digits)
        check_room(
            self.hparams,
            addition.num_sources,
            lambda low, high: f"operands of {low}..{high} digits",
            "max_task_len",
        )
        self.src_codec = self.tgt_codec = WordCodec(addition.WORDS)

    @property
    def max_seq_len(self) -> int:
        """Two operands, ``+`` and EOS; the sum has at most one digit more than them."""
        return 2 * self.longest_length + 2

    def draw(self, rng: Random, shortest: int, longest: int) -> Example:
        return addition.draw(rng, shortest, longest, self.hparams.reversed_digits)


class RecallDataModule(DrawnTaskDataModule):
    """Multi-query associative recall (:mod:`.recall`). Task lengths are key-value pairs per
    example: train/val/test ``min_task_len..max_task_len``, ``test_long`` past them; every
    example asks ``num_queries`` of its keys."""

    name = "recall"
    split_defaults: ClassVar[dict[str, int | None]] = {"train_size": 50_000}

    def __init__(
        self,
        num_keys: int = 32,
        num_values: int = 16,
        num_queries: int = 2,
        min_task_len: int = 2,
        max_task_len: int = 8,
        test_long_size: int = 1000,
        test_long_max_task_len: int = 12,
        **splits,
    ):
        super().__init__()
        self.save_hyperparameters(logger=False)
        self.save_split_settings(splits)
        _check_recall(self.hparams)
        check_room(
            self.hparams,
            lambda low, high: recall.num_sources(num_keys, num_values, low, high, num_queries),
            lambda low, high: (
                f"{num_keys} keys, {num_values} values and {num_queries} queries with "
                f"{low}..{high} pairs"
            ),
            "num_keys, num_values or max_task_len",
        )
        self.src_codec = WordCodec(recall.source_words(num_keys, num_values))
        self.tgt_codec = WordCodec(recall.value_words(num_values))

    @property
    def max_seq_len(self) -> int:
        """A key and a value per pair, ``?``, the queries and EOS."""
        return 2 * self.longest_length + self.hparams.num_queries + 2

    def draw(self, rng: Random, shortest: int, longest: int) -> Example:
        hp = self.hparams
        return recall.draw(rng, hp.num_keys, hp.num_values, shortest, longest, hp.num_queries)


def _check_recall(hp: AttributeDict) -> None:
    check_integer("num_keys", hp.num_keys, minimum=1)
    check_integer("num_values", hp.num_values, minimum=1)
    check_integer("num_queries", hp.num_queries, minimum=1)
    check_task_lengths(hp)
    if hp.num_queries > hp.min_task_len:
        raise InvalidSetting(
            "num_queries",
            hp.num_queries,
            f"more than the min_task_len={hp.min_task_len} pairs an example may have "
            "(queries are distinct keys of the example)",
            f"num_queries <= {hp.min_task_len}",
        )
    longest = longest_task_len(hp)
    if longest > hp.num_keys:
        key = "test_long_max_task_len" if hp.test_long_size > 0 else "max_task_len"
        raise InvalidSetting(
            key,
            longest,
            f"more pairs than the num_keys={hp.num_keys} distinct keys",
            f"{key} <= {hp.num_keys}, or more num_keys",
        )


class ScanDataModule(WordTaskDataModule):
    """SCAN (:mod:`.scan`): ``split=simple`` (a random 80/20 cut) or ``length`` (train on
    action sequences of at most 22 actions, test on the longer ones). ``val_size`` commands
    of the training side are held out for validation; ``train_size`` and ``test_size`` take
    at most that many of the rest and of the test side (null: all of them)."""

    split_defaults: ClassVar[dict[str, int | None]] = {"train_size": None, "test_size": None}

    def __init__(self, split: str = "simple", **splits):
        super().__init__()
        self.save_hyperparameters(logger=False)
        self.save_split_settings(splits, fixed_set=True)
        check_choice("split", split, scan.SPLITS)
        val_size = self.hparams.val_size
        check_integer("val_size", val_size, minimum=1, maximum=10000)  # of 16,728 or 16,990
        self.src_codec = WordCodec(scan.COMMAND_WORDS)
        self.tgt_codec = WordCodec(scan.ACTION_WORDS)

    @property
    def max_seq_len(self) -> int:
        """The longest action sequence and EOS (the commands are shorter)."""
        return scan.LONGEST_ACTIONS + 1

    def examples(self) -> dict[str, list[Example]]:
        hp = self.hparams
        train, test = scan.split_commands(hp.split, python_random(hp.seed, "scan", hp.split))
        rest = train[hp.val_size :]
        return {
            "train": rest[: hp.train_size],  # a slice to None: all of them
            "val": train[: hp.val_size],
            "test": test[: hp.test_size],
        }
