"""The token embeddings, which own their initialisation."""

import torch
from torch import nn

from transformer_lab.model.init import OwnsInit


class TokenEmbedding(nn.Embedding, OwnsInit):
    """A vocabulary's table ``[V, d_model]``, drawn ``N(0, d_model^-0.5)``: after the
    model's ``sqrt(d_model)`` scale each component has unit variance. Tied to the output
    head, the shared matrix keeps this init (it is drawn after every projection)."""

    @torch.no_grad()
    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        self.weight.normal_(0.0, self.embedding_dim**-0.5, generator=generator)
