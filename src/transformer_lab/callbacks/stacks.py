"""The names under which the callbacks and the report measure the model's layers.

Layers are numbered from 0, like ``model.encoder_layers[i]``, so ``norm/grad/encoder/3``
is ``model.encoder_layers[3]``.
"""

import torch
from torch import nn

from transformer_lab.model import Seq2SeqTransformer

STACKS = ("encoder", "decoder")
# the weight matrices of one layer, by sublayer: what Xiong et al. (2020) measure
WEIGHT_GROUPS = ("ffn.w1", "ffn.w2", "self_attn", "cross_attn")


def stacks(model: Seq2SeqTransformer) -> dict[str, nn.ModuleList]:
    return {"encoder": model.encoder_layers, "decoder": model.decoder_layers}


def weight_groups(layer: nn.Module) -> dict[str, list[nn.Parameter]]:
    """``{"ffn.w1": [W1], "ffn.w2": [W2], "self_attn": [its projections], ...}``.

    Encoder layers have no ``cross_attn``.
    """
    groups = {"ffn.w1": [layer.ffn.w1.weight], "ffn.w2": [layer.ffn.w2.weight]}
    for name in ("self_attn", "cross_attn"):
        if hasattr(layer, name):
            groups[name] = [p for n, p in getattr(layer, name).named_parameters() if "weight" in n]
    return groups


def global_norm(tensors: list[torch.Tensor]) -> float:
    """The L2 norm of ``tensors`` taken as one vector (as gradient clipping measures it)."""
    return torch.linalg.vector_norm(torch.stack([t.norm() for t in tensors])).item()
