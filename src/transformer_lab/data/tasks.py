"""The synthetic tasks, by name (``data.task``): each a pure function from source words to
target words, and how long its target is for a source of a given length.

A task sees only content ids (``>= FIRST_CONTENT``); the special tokens (EOS on the
source, BOS/EOS around the target) are added by the data module, so a task stays a
one-line statement of what the model must learn.

Every task works along the last dimension, so the same function maps one sequence
``[L]`` or a block of equal-length sequences ``[N, L]`` at once; the data module uses
the block form so that generating tens of thousands of examples costs a handful of
tensor ops rather than a Python loop.

Each task states its target's length as a function of its source's
(:meth:`Task.target_length`), which is what the data module's ``max_seq_len``, and with it
the job's check of ``model.max_len``, read: a target longer than its source (``duplicate``)
needs more positions than the source does (tests/data/test_tasks.py holds every task to it).
"""

import torch

from transformer_lab.config.registry import Registry

TASKS = Registry("task")


class Task:
    """A task: :meth:`apply` to words ``[..., L]``, :meth:`target_length` of a source of L."""

    @staticmethod
    def apply(words: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    @staticmethod
    def target_length(source_length: int) -> int:
        raise NotImplementedError


class SameLength(Task):
    """A task whose target is as long as its source."""

    @staticmethod
    def target_length(source_length: int) -> int:
        return source_length


@TASKS.register("reverse")
class Reverse(SameLength):
    """The words in reverse order: every output position depends on a far input position."""

    @staticmethod
    def apply(words: torch.Tensor) -> torch.Tensor:
        return words.flip(-1)


@TASKS.register("copy")
class Copy(SameLength):
    """The words unchanged: the easiest alignment (the diagonal), a sanity baseline."""

    @staticmethod
    def apply(words: torch.Tensor) -> torch.Tensor:
        return words.clone()


@TASKS.register("sort")
class Sort(SameLength):
    """The words in ascending order: needs content-based, not positional, attention."""

    @staticmethod
    def apply(words: torch.Tensor) -> torch.Tensor:
        return words.sort(dim=-1).values


@TASKS.register("duplicate")
class Duplicate(Task):
    """The words twice over: a target twice as long as its source, whose second half the
    decoder can copy from its own first half or from the source."""

    @staticmethod
    def apply(words: torch.Tensor) -> torch.Tensor:
        return torch.cat((words, words), dim=-1)

    @staticmethod
    def target_length(source_length: int) -> int:
        return 2 * source_length
