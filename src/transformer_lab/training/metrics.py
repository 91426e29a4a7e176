"""The evaluation metrics of a split, as sums that torchmetrics reduces across DDP ranks.

Everything is kept as sums (summed NLL, token counts, sequence counts) and divided only
when read, so a split gives the same numbers however it is batched or spread over ranks.
Sequences are counted per source length in words (``seqs[n]``, ``correct_seqs[n]`` for
``n < num_lengths``), so the accuracy-by-length curve and ``seq_acc`` come from the same
sums. Pure tensors in, floats out: no Lightning here.
"""

import math

import torch
from torchmetrics import Metric

from transformer_lab.tokens import PAD


class StageMetrics(Metric):
    """``loss``, ``ppl``, ``token_acc``, ``seq_acc`` and ``seq_acc_by_len/<n>`` of a split."""

    full_state_update = False  # update() only adds: torchmetrics may skip its double pass
    higher_is_better = None  # several numbers, not one

    def __init__(self, num_lengths: int):
        super().__init__()
        for name in ("nll", "tokens", "correct_tokens"):
            self.add_state(name, torch.zeros((), dtype=torch.float64), dist_reduce_fx="sum")
        for name in ("correct_seqs", "seqs"):
            self.add_state(
                name, torch.zeros(num_lengths, dtype=torch.float64), dist_reduce_fx="sum"
            )

    def update(
        self,
        nll: torch.Tensor,
        labels: torch.Tensor,
        predicted_labels: torch.Tensor,
        words: torch.Tensor,
        sequence_correct: torch.Tensor,
    ) -> None:
        """Add one batch.

        ``nll``: summed token NLL over the non-PAD labels; ``labels`` and
        ``predicted_labels``: ``[N]`` teacher-forced targets and argmax, PAD where ignored;
        ``words``: ``[B]`` source lengths in words; ``sequence_correct``: ``[B]`` bool.
        """
        real = labels != PAD
        self.nll += nll.detach()
        self.tokens += real.sum()
        self.correct_tokens += ((predicted_labels == labels) & real).sum()
        self.correct_seqs.index_add_(0, words, sequence_correct.to(self.seqs.dtype))
        self.seqs.index_add_(0, words, torch.ones_like(words, dtype=self.seqs.dtype))

    def compute(self) -> dict[str, float]:
        """Every metric of the split; ``seq_acc_by_len/<n>`` for every source length ``n``
        (in words) the split holds."""
        tokens = max(float(self.tokens), 1.0)
        loss = float(self.nll) / tokens
        by_len = {
            f"seq_acc_by_len/{n}": float(self.correct_seqs[n] / self.seqs[n])
            for n in self.seqs.nonzero().flatten().tolist()
        }
        return {
            "loss": loss,
            "ppl": math.exp(min(loss, 50.0)),
            "token_acc": float(self.correct_tokens) / tokens,
            "seq_acc": float(self.correct_seqs.sum()) / max(float(self.seqs.sum()), 1.0),
        } | by_len
