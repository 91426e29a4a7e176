"""The peer: the same encoder-decoder built on ``torch.nn.Transformer``.

Same token embeddings scaled by ``sqrt(d_model)``, same sinusoidal table, same dropout
after the embeddings, same output head, same sizes and norm placement (``norm_first``
for pre-norm). One difference is ``nn.Transformer``'s own: it always appends a final
LayerNorm to the encoder and to the decoder stack, where our post-norm model has none
(pre-norm has one in both), so the post-norm peer does two LayerNorms more per pass.

Masks come from :mod:`transformer_lab.model.masks` and are converted to
``nn.Transformer``'s True = blocked by :func:`~transformer_lab.model.masks.to_blocked`,
the project's one conversion point.
"""

import math

import torch
from torch import nn

from transformer_lab.console import unheard
from transformer_lab.model import masks
from transformer_lab.model.positional import sinusoid_table


class TorchTransformerPeer(nn.Module):
    def __init__(
        self,
        src_vocab_size,
        tgt_vocab_size,
        d_model,
        num_heads,
        num_encoder_layers,
        num_decoder_layers,
        d_ff,
        dropout,
        norm,
        max_len: int = 512,
    ):
        super().__init__()
        if norm not in ("post", "pre"):
            raise ValueError(f"nn.Transformer has post and pre norm only; got norm={norm!r}")
        self.embed_scale = math.sqrt(d_model)
        self.src_embed = nn.Embedding(src_vocab_size, d_model)
        self.tgt_embed = nn.Embedding(tgt_vocab_size, d_model)
        self.register_buffer("table", sinusoid_table(max_len, d_model), persistent=False)
        self.embed_dropout = nn.Dropout(dropout)
        with unheard("nested_tensor"):
            self.transformer = nn.Transformer(
                d_model,
                num_heads,
                num_encoder_layers,
                num_decoder_layers,
                d_ff,
                dropout,
                batch_first=True,
                norm_first=norm == "pre",
            )
        self.output = nn.Linear(d_model, tgt_vocab_size)

    def _embed(self, embedding: nn.Embedding, tokens: torch.Tensor) -> torch.Tensor:
        x = embedding(tokens) * self.embed_scale + self.table[: tokens.size(1)]
        return self.embed_dropout(x)

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
        """``src [B, S]``, ``tgt_in [B, T]`` -> logits ``[B, T, V]``."""
        src_blocked = masks.to_blocked(masks.key_padding(src))[:, 0, 0]  # [B, S]
        tgt_blocked = masks.to_blocked(masks.key_padding(tgt_in))[:, 0, 0]  # [B, T]
        positions = torch.arange(tgt_in.size(1), device=tgt_in.device)
        future = masks.to_blocked(masks.causal(positions, positions))  # [T, T]
        out = self.transformer(
            self._embed(self.src_embed, src),
            self._embed(self.tgt_embed, tgt_in),
            tgt_mask=future,
            src_key_padding_mask=src_blocked,
            tgt_key_padding_mask=tgt_blocked,
            memory_key_padding_mask=src_blocked,
            tgt_is_causal=True,
        )
        return self.output(out)
