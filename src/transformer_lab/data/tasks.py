"""The synthetic tasks: each is a pure function from source words to target words.

A task sees only content ids (``>= FIRST_CONTENT``); the special tokens (EOS on the
source, BOS/EOS around the target) are added by the data module, so a task stays a
one-line statement of what the model must learn.

Every task works along the last dimension, so the same function maps one sequence
``[L]`` or a block of equal-length sequences ``[N, L]`` at once; the data module uses
the block form so that generating tens of thousands of examples costs a handful of
tensor ops rather than a Python loop.
"""

from collections.abc import Callable

import torch


def reverse(words: torch.Tensor) -> torch.Tensor:
    """The words in reverse order: every output position depends on a far input position."""
    return words.flip(-1)


def copy(words: torch.Tensor) -> torch.Tensor:
    """The words unchanged: the easiest alignment (the diagonal), a sanity baseline."""
    return words.clone()


def sort(words: torch.Tensor) -> torch.Tensor:
    """The words in ascending order: needs content-based, not positional, attention."""
    return words.sort(dim=-1).values


TASKS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "reverse": reverse,
    "copy": copy,
    "sort": sort,
}
