"""The settings every generated task shares, and their checks: source lengths
``min_len..max_len`` for train/val/test, an optional ``test_long`` split of lengths
``max_len + 1..test_long_max_len``, the split sizes, and the room for them.

What a length counts is the task's own: words for reverse/copy/sort, digits of each operand
for addition, key-value pairs for recall.
"""

from collections.abc import Callable

from lightning.fabric.utilities.data import AttributeDict

from transformer_lab.config.validation import InvalidSetting, check_integer

# The splits of lengths min_len..max_len, in the order they are drawn: each excludes the
# sources of those before it.
DRAW_ORDER = ("train", "val", "test")


def check_split_settings(hp: AttributeDict) -> None:
    """InvalidSetting for the first length, size or seed of the wrong type or out of range."""
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
    total = available(hp.min_len, hp.max_len)
    described = f"{space(hp.min_len, hp.max_len)} has {total} distinct sequences"
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
        total = available(hp.max_len + 1, hp.test_long_max_len)
        if hp.test_long_size > total:
            raise InvalidSetting(
                "test_long_size",
                hp.test_long_size,
                f"more distinct sources than {space(hp.max_len + 1, hp.test_long_max_len)} "
                f"has: only {total} distinct sequences",
                f"test_long_size <= {total}, or a larger test_long_max_len",
            )
