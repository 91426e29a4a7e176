"""Examples given as lists of token ids, of any lengths, as the padded tensors of a
:class:`~transformer_lab.data.split.Split`: the tasks whose sources and targets differ in
length and vocabulary (pairs from files, addition, recall, SCAN).

The layout is the synthetic tasks' (:mod:`.generation`): ``src = source + [EOS]``,
``tgt_in = [BOS] + target``, ``tgt_out = target + [EOS]``, right-padded with PAD.
"""

from collections.abc import Sequence

import torch

from transformer_lab.data.ragged import Ragged
from transformer_lab.data.split import Batch, Split
from transformer_lab.tokens import BOS, EOS

Example = tuple[list[str], list[str]]  # the source's words and the target's, of a word task


def padded(
    sources: Sequence[Sequence[int]] | Ragged, targets: Sequence[Sequence[int]] | Ragged
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``src [N, S]``, ``tgt_in [N, T]``, ``tgt_out [N, T]`` of the content ids of each
    example's source and target (lists of ids, or :class:`~.ragged.Ragged`)."""
    sources, targets = (x if isinstance(x, Ragged) else Ragged.of(x) for x in (sources, targets))
    src = sources.rows(None, EOS)  # [N, S]
    tgt_in = targets.rows(BOS, None)  # [N, T]
    tgt_out = targets.rows(None, EOS)  # [N, T]
    return src, tgt_in, tgt_out


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
