"""The evaluation metrics of a split, as sums that torchmetrics reduces across DDP ranks.

Everything is kept as sums (summed NLL, token counts, sequence counts) and divided only
when read, so a split gives the same numbers however it is batched or spread over ranks.
Sequences are counted per source length in words (``seqs[n]``, ``correct_seqs[n]`` for
``n < num_lengths``), so the accuracy-by-length curve and ``seq_acc`` come from the same
sums. Pure tensors in, floats out: no Lightning here.

The test stages also score oracle-length decoding (:func:`~transformer_lab.model.decoding.
greedy_to_length`, each row forced to its target's length): ``oracle_seq_acc`` (every word
right), ``oracle_token_acc`` (the words right) and ``oracle_token_acc_by_pos/<i>`` (the
``i``-th target word right, ``i`` from 1, over the targets that long), so position
failures past the training lengths are read apart from the end-of-sequence decision. One
number per target position (at most ``max_len``) keeps metrics.json small.
"""

import math

import torch
from torchmetrics import Metric

from transformer_lab.tokens import EOS, PAD


class StageMetrics(Metric):
    """``loss``, ``ppl``, ``token_acc``, ``seq_acc`` and ``seq_acc_by_len/<n>`` of a split,
    and the ``oracle_*`` metrics where oracle-length decodings were added."""

    full_state_update = False  # update() only adds: torchmetrics may skip its double pass
    higher_is_better = None  # several numbers, not one

    def __init__(self, num_lengths: int):
        super().__init__()
        for name in ("nll", "tokens", "correct_tokens", "oracle_correct_seqs", "oracle_seqs"):
            self.add_state(name, torch.zeros((), dtype=torch.float64), dist_reduce_fx="sum")
        for name in ("correct_seqs", "seqs", "oracle_correct_by_pos", "oracle_words_by_pos"):
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
        oracle: torch.Tensor | None = None,
    ) -> None:
        """Add one batch.

        ``nll``: summed token NLL over the non-PAD labels; ``labels`` and
        ``predicted_labels``: ``[N]`` teacher-forced targets and argmax, PAD where ignored;
        ``words``: ``[B]`` source lengths in words; ``sequence_correct``: ``[B]`` bool;
        ``oracle``: the oracle-length decodings ``[B, T]`` (BOS dropped, PAD after EOS) of
        the targets ``labels.view(B, T)``, or None.
        """
        real = labels != PAD
        self.nll += nll.detach()
        self.tokens += real.sum()
        self.correct_tokens += ((predicted_labels == labels) & real).sum()
        self.correct_seqs.index_add_(0, words, sequence_correct.to(self.seqs.dtype))
        self.seqs.index_add_(0, words, torch.ones_like(words, dtype=self.seqs.dtype))
        if oracle is not None:
            self._add_oracle(oracle, labels.view_as(oracle))

    def _add_oracle(self, oracle: torch.Tensor, targets: torch.Tensor) -> None:
        """The words of ``oracle [B, T]`` that match ``targets [B, T]``, by position; EOS,
        forced, is not scored."""
        words = (targets != PAD) & (targets != EOS)  # [B, T] the target's words
        correct = (oracle == targets) & words
        self.oracle_seqs += words.size(0)
        self.oracle_correct_seqs += (correct == words).all(dim=1).sum()
        self.oracle_correct_by_pos[: words.size(1)] += correct.sum(dim=0)
        self.oracle_words_by_pos[: words.size(1)] += words.sum(dim=0)

    def compute(self) -> dict[str, float]:
        """Every metric of the split; ``seq_acc_by_len/<n>`` for every source length ``n``
        (in words) the split holds."""
        tokens = max(float(self.tokens), 1.0)
        loss = float(self.nll) / tokens
        by_len = {
            f"seq_acc_by_len/{n}": float(self.correct_seqs[n] / self.seqs[n])
            for n in self.seqs.nonzero().flatten().tolist()
        }
        metrics = {
            "loss": loss,
            "ppl": math.exp(min(loss, 50.0)),
            "token_acc": float(self.correct_tokens) / tokens,
            "seq_acc": float(self.correct_seqs.sum()) / max(float(self.seqs.sum()), 1.0),
        }
        return metrics | by_len | self._oracle()

    def _oracle(self) -> dict[str, float]:
        """The ``oracle_*`` metrics, or none where no oracle decoding was added."""
        if self.oracle_seqs == 0:
            return {}
        correct, words = self.oracle_correct_by_pos, self.oracle_words_by_pos
        by_pos = {
            f"oracle_token_acc_by_pos/{i + 1}": float(correct[i] / words[i])
            for i in words.nonzero().flatten().tolist()
        }
        return {
            "oracle_seq_acc": float(self.oracle_correct_seqs / self.oracle_seqs),
            "oracle_token_acc": float(correct.sum()) / max(float(words.sum()), 1.0),
        } | by_pos
