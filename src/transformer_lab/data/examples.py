"""Examples given as lists of token ids, of any lengths, as the padded tensors of a
:class:`~transformer_lab.data.split.Split`: the tasks whose sources and targets differ in
length and vocabulary (pairs from files, addition, recall, SCAN).

The layout is the synthetic tasks' (:mod:`.generation`): ``src = source + [EOS]``,
``tgt_in = [BOS] + target``, ``tgt_out = target + [EOS]``, right-padded with PAD.
"""

from collections.abc import Sequence
from itertools import chain

import numpy as np
import torch

from transformer_lab.data.split import Batch, Split
from transformer_lab.tokens import BOS, EOS, PAD

Example = tuple[list[str], list[str]]  # the source's words and the target's, of a word task


def _rows(sequences: Sequence[Sequence[int]], first: int | None, last: int | None) -> torch.Tensor:
    """Each sequence as a row ``[N, W]``, behind ``first`` and before ``last`` where those
    are given, right-padded with PAD: written in one scatter from the concatenated ids,
    some 50 times faster than ``torch.tensor`` over nested lists."""
    lengths = torch.tensor([len(ids) for ids in sequences], dtype=torch.long)  # [N]
    total = int(lengths.sum())
    ids = torch.from_numpy(np.fromiter(chain.from_iterable(sequences), np.int64, total))
    shift = int(first is not None)
    width = int(lengths.max()) + shift + int(last is not None)
    out = torch.full((len(sequences), width), PAD, dtype=torch.long)
    row = torch.repeat_interleave(torch.arange(len(sequences)), lengths)  # [total]
    starts = torch.cumsum(lengths, 0) - lengths  # [N]
    column = torch.arange(total) - starts[row] + shift  # [total]
    out[row, column] = ids
    if first is not None:
        out[:, 0] = first
    if last is not None:
        out[torch.arange(len(sequences)), lengths + shift] = last
    return out


def padded(
    sources: Sequence[Sequence[int]], targets: Sequence[Sequence[int]]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``src [N, S]``, ``tgt_in [N, T]``, ``tgt_out [N, T]`` of the content ids of each
    example's source and target."""
    src = _rows(sources, None, EOS)  # [N, S]
    tgt_in = _rows(targets, BOS, None)  # [N, T]
    tgt_out = _rows(targets, None, EOS)  # [N, T]
    return src, tgt_in, tgt_out


def longest_sequence(sources: Sequence[Sequence[int]], targets: Sequence[Sequence[int]]) -> int:
    """The longest ``src``/``tgt_in``/``tgt_out`` row of these examples (EOS/BOS included)."""
    return max(len(ids) for ids in (*sources, *targets)) + 1


class TextSplit(Split):
    """A split whose examples have reference texts (pairs from files): each batch also
    carries ``row [B]``, the examples' indices in the split, by which BLEU and chrF look up
    the references as written in the file rather than as decoded from their tokens."""

    def __init__(self, name: str, sources, targets, references: Sequence[str]):
        super().__init__(name, *padded(sources, targets))
        self.references = list(references)

    def __getitems__(self, indices: Sequence[int]) -> Batch:
        batch = super().__getitems__(indices)
        batch["row"] = torch.as_tensor(indices, dtype=torch.long)  # [B]
        return batch
