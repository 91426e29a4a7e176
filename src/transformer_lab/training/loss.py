"""The loss everything measures: token cross-entropy over the labels that are not PAD.

Training, evaluation, the norm-comparison twins and the benchmark all compute it, and a
twin's or a benchmark's loss is only comparable to the run's if it is the same function.
"""

import torch
import torch.nn.functional as F

from transformer_lab.tokens import PAD


def token_nll(
    logits: torch.Tensor, labels: torch.Tensor, label_smoothing: float = 0.0, reduction="mean"
) -> torch.Tensor:
    """``logits [B, T, V]`` against ``labels [B, T]``; PAD labels are ignored."""
    return F.cross_entropy(
        logits.flatten(0, 1),
        labels.flatten(),
        ignore_index=PAD,
        label_smoothing=label_smoothing,
        reduction=reduction,
    )
