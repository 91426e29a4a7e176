"""The settings every datamodule shares, in one node: how many examples each split holds,
the batch size, the seed and the loader's workers (:class:`SplitSettings`); and the checks
of the drawn tasks' lengths and of the room for their splits.

A task's length is counted in the task's own unit, never in the model's positions: words for
reverse/copy/sort, digits of each operand for addition, key-value pairs for recall. So its
settings say so: ``min_task_len..max_task_len`` for train/val/test, and an optional
``test_long`` split of lengths ``max_task_len + 1..test_long_max_task_len``. How many
positions the longest sequence needs (BOS/EOS included) is each datamodule's
``max_seq_len``, which the job checks against ``model.max_len``.
"""

from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields

from lightning.fabric.utilities.data import AttributeDict

from transformer_lab.config.typed import from_settings
from transformer_lab.config.validation import InvalidSetting, check_integer

# The splits of lengths min_task_len..max_task_len, in the order they are drawn: each
# excludes the sources of those before it.
DRAW_ORDER = ("train", "val", "test")
# what evaluate may change of a drawn task's test splits (data.<name>=...)
TEST_SPLIT_SETTINGS = ("test_size", "test_long_size", "test_long_max_task_len")


@dataclass(frozen=True)
class SplitSettings:
    """What every datamodule takes besides its task's own settings, each default written
    here once; ``conf/data/shared/splits.yaml`` is this node for the configs (a test keeps
    the two equal). A task of a fixed set of examples (SCAN, pairs from files) reads
    ``train_size``/``test_size`` as "at most" and ``null`` as all of them."""

    train_size: int | None = field(default=100_000, metadata={"help": "training examples"})
    val_size: int = field(default=500, metadata={"help": "held out: never in train"})
    test_size: int | None = field(default=1000, metadata={"help": "held out of both"})
    batch_size: int = field(default=64, metadata={"help": "examples per batch"})
    seed: int = field(default=0, metadata={"help": "the data's random streams (.streams)"})
    num_workers: int = field(
        default=0, metadata={"help": "loader processes; 0: the main process (rarely slower)"}
    )

    @classmethod
    def of(cls, owner: str, own: list[str], given: dict) -> "SplitSettings":
        """The settings ``given`` (the keywords the datamodule ``owner`` does not take as
        its ``own`` settings), the rest at their defaults; InvalidSetting for a key that is
        none of them, naming every setting ``owner`` takes: the refusal of
        :func:`~transformer_lab.config.typed.from_settings` (every field has a default, so
        it refuses only an unknown key), with ``owner``'s own settings allowed too."""
        try:
            return from_settings(cls, given)
        except InvalidSetting as error:
            names = [f.name for f in fields(cls)]
            reason = f"{owner} takes no such setting"
            allowed = ", ".join([*own, *names])
            raise InvalidSetting(error.key, error.value, reason, allowed) from None

    def check(self, fixed_set: bool = False) -> None:
        """InvalidSetting for the first setting of the wrong type or out of its range;
        ``fixed_set``: ``train_size``/``test_size`` may be None (all the examples)."""
        for name in ("train_size", "val_size", "test_size", "batch_size"):
            value = getattr(self, name)
            if not (fixed_set and value is None and name != "val_size"):
                check_integer(name, value, minimum=1)
        check_integer("num_workers", self.num_workers, minimum=0)
        check_integer("seed", self.seed, minimum=0)

    def as_settings(self) -> dict:
        return asdict(self)


def check_task_lengths(hp: AttributeDict) -> None:
    """InvalidSetting for the first length of the wrong type or out of range."""
    check_integer("min_task_len", hp.min_task_len, minimum=1)
    check_integer("max_task_len", hp.max_task_len, minimum=1)
    if hp.min_task_len > hp.max_task_len:
        raise InvalidSetting(
            "min_task_len",
            hp.min_task_len,
            f"above max_task_len={hp.max_task_len}",
            "<= max_task_len",
        )
    check_integer("test_long_size", hp.test_long_size, minimum=0)  # 0: no test_long split
    check_integer("test_long_max_task_len", hp.test_long_max_task_len, minimum=0)
    if hp.test_long_size > 0 and hp.test_long_max_task_len <= hp.max_task_len:
        raise InvalidSetting(
            "test_long_max_task_len",
            hp.test_long_max_task_len,
            f"not above max_task_len={hp.max_task_len}, but test_long_size="
            f"{hp.test_long_size} asks for sources longer than any seen in training",
            f"test_long_max_task_len > {hp.max_task_len}, or test_long_size=0",
        )


def longest_task_len(hp: AttributeDict) -> int:
    """The longest length of any split, in the task's own unit."""
    return hp.test_long_max_task_len if hp.test_long_size > 0 else hp.max_task_len


def check_room(
    hp: AttributeDict,
    available: Callable[[int, int], int],
    space: Callable[[int, int], str],
    larger: str,
) -> None:
    """InvalidSetting unless the lengths hold as many distinct sources as the splits ask.

    ``available(low, high)`` counts the distinct sources of lengths ``low..high``,
    ``space(low, high)`` names that space (``vocab_size=16 (13 content ids) with lengths
    3..10``), ``larger`` the settings that would make it larger. The splits are drawn one
    after the other (:data:`DRAW_ORDER`), each excluding the sources of those before it,
    so each has room for what the earlier ones left.
    """
    total = available(hp.min_task_len, hp.max_task_len)
    described = f"{space(hp.min_task_len, hp.max_task_len)} has {total} distinct sequences"
    earlier, taken = [], 0
    for name in DRAW_ORDER:
        size = hp[f"{name}_size"]
        if size > total - taken:
            held = f", {taken} of them in {' and '.join(earlier)}, which {name} never repeats"
            raise InvalidSetting(
                f"{name}_size",
                size,
                f"more distinct {name} sources than there are: {described}"
                f"{held if earlier else ''}",
                f"{name}_size <= {total - taken}, or a larger {larger}",
            )
        earlier.append(name)
        taken += size
    if hp.test_long_size > 0:
        low, high = hp.max_task_len + 1, hp.test_long_max_task_len
        total = available(low, high)
        if hp.test_long_size > total:
            raise InvalidSetting(
                "test_long_size",
                hp.test_long_size,
                f"more distinct sources than {space(low, high)} has: only {total} distinct "
                "sequences",
                f"test_long_size <= {total}, or a larger test_long_max_task_len",
            )
