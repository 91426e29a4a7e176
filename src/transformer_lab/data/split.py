"""One split held pre-padded in memory, served a whole batch per indexing op."""

from collections.abc import Sequence

import torch
from torch.utils.data import Dataset

from transformer_lab.tokens import PAD

Batch = dict[str, torch.Tensor]


def collate(batch: Batch) -> Batch:
    """Return the batch as is: :meth:`Split.__getitems__` already built it.

    Defined at module level (not a lambda) so DataLoader workers can pickle it.
    """
    return batch


class Split(Dataset):
    """One split, stored pre-padded so that a batch costs three indexing ops.

    ``src [N, S]``, ``tgt_in [N, T]``, ``tgt_out [N, T]`` are right-padded with ``PAD``;
    ``src_len [N]`` and ``tgt_len [N]`` count the real tokens of each row (EOS/BOS
    included), which is what trimming a batch to its longest row needs.
    """

    def __init__(self, name: str, src: torch.Tensor, tgt_in: torch.Tensor, tgt_out: torch.Tensor):
        self.name = name
        self.src_len = (src != PAD).sum(dim=1)  # [N]
        self.tgt_len = (tgt_out != PAD).sum(dim=1)  # [N]
        width_src = int(self.src_len.max()) if len(src) else 0
        width_tgt = int(self.tgt_len.max()) if len(src) else 0
        self.src = src[:, :width_src].contiguous()  # [N, S]
        self.tgt_in = tgt_in[:, :width_tgt].contiguous()  # [N, T]
        self.tgt_out = tgt_out[:, :width_tgt].contiguous()  # [N, T]

    def __len__(self) -> int:
        return len(self.src)

    def __getitem__(self, index: int) -> Batch:
        """One example as 1-D tensors without padding (for inspection; loaders batch)."""
        s, t = int(self.src_len[index]), int(self.tgt_len[index])
        return {
            "src": self.src[index, :s],  # [s]
            "tgt_in": self.tgt_in[index, :t],  # [t]
            "tgt_out": self.tgt_out[index, :t],  # [t]
        }

    def __getitems__(self, indices: Sequence[int]) -> Batch:
        """The rows ``indices`` as one batch, trimmed to the longest row in it."""
        rows = torch.as_tensor(indices, dtype=torch.long)  # [B]
        s, t = int(self.src_len[rows].max()), int(self.tgt_len[rows].max())
        return {
            "src": self.src[rows, :s],  # [B, S]
            "tgt_in": self.tgt_in[rows, :t],  # [B, T]
            "tgt_out": self.tgt_out[rows, :t],  # [B, T]
        }
