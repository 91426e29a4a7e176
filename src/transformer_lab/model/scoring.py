"""How likely the model finds an output it produced: the log-probability of a decoded
sequence, scored the way the searches of :mod:`.decoding` score (PAD and BOS ruled out)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from transformer_lab.tokens import BOS, PAD

if TYPE_CHECKING:
    from transformer_lab.model.transformer import Seq2SeqTransformer


def sequence_log_probs(
    model: Seq2SeqTransformer, src: torch.Tensor, tokens: torch.Tensor
) -> torch.Tensor:
    """``[B]`` log-probability of each row of ``tokens [B, 1 + T]`` (BOS, the output, PAD
    after its EOS: what the searches return) given ``src [B, S]``, in one teacher-forced
    pass. Beam search ranks by this sum (with length penalty 0); for sampling it is the
    likelihood under the model's own distribution, before temperature and top-k."""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            logits = model(src, tokens[:, :-1])  # [B, T, V]
    finally:
        model.train(was_training)
    logits[..., [PAD, BOS]] = float("-inf")
    target = tokens[:, 1:]  # [B, T]
    log_probs = logits.log_softmax(-1).gather(-1, target[..., None]).squeeze(-1)  # [B, T]
    return log_probs.masked_fill(target == PAD, 0.0).sum(dim=1)
