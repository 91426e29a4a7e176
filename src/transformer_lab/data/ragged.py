"""Sequences of token ids of different lengths held as one flat array and their lengths: what
a corpus's tokenized sentences cost in memory.

A million sentences as Python lists of ints take some 60 bytes a token (an int object and
its pointer) and as tokenizer ``Encoding`` objects some 2 KB a sentence; here they take 4
bytes a token (``int32``: every vocabulary the lab learns is far below 2**31), so a large
file's ids are held once, compactly, and padded into a split's tensors in one step
(:meth:`Ragged.rows`).
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
import torch

from transformer_lab.tokens import PAD


@dataclass(frozen=True)
class Ragged:
    """``ids``: every sequence's ids one after the other ``[total]``; ``lengths [N]``."""

    ids: np.ndarray
    lengths: np.ndarray

    @classmethod
    def of(cls, sequences: Iterable[Sequence[int]]) -> "Ragged":
        sequences = list(sequences)
        lengths = np.fromiter((len(ids) for ids in sequences), np.int64, len(sequences))
        ids = np.fromiter(chain.from_iterable(sequences), np.int32, int(lengths.sum()))
        return cls(ids, lengths)

    @classmethod
    def joined(cls, parts: Sequence["Ragged"]) -> "Ragged":
        """The sequences of ``parts``, in order."""
        if not parts:
            return cls(np.zeros(0, np.int32), np.zeros(0, np.int64))
        ids = np.concatenate([part.ids for part in parts])
        return cls(ids, np.concatenate([part.lengths for part in parts]))

    def __len__(self) -> int:
        return len(self.lengths)

    def longest(self) -> int:
        return int(self.lengths.max()) if len(self) else 0

    def where(self, keep: np.ndarray) -> "Ragged":
        """The sequences whose entry in the boolean ``keep [N]`` is True."""
        return Ragged(self.ids[np.repeat(keep, self.lengths)], self.lengths[keep])

    def rows(self, first: int | None, last: int | None) -> torch.Tensor:
        """Each sequence as a row ``[N, W]`` of ``int64``, behind ``first`` and before
        ``last`` where those are given, right-padded with PAD: one masked assignment, no
        index array per token."""
        shift = int(first is not None)
        width = self.longest() + shift + int(last is not None)
        out = np.full((len(self), width), PAD, dtype=np.int64)
        filled = np.arange(width - shift)[None, :] < self.lengths[:, None]  # [N, W - shift]
        out[:, shift:][filled] = self.ids
        if first is not None:
            out[:, 0] = first
        if last is not None:
            out[np.arange(len(self)), self.lengths + shift] = last
        return torch.from_numpy(out)
