"""Training-step throughput of our model against the ``nn.Transformer`` peer."""

import torch

from transformer_lab.bench.peers import TorchTransformerPeer
from transformer_lab.bench.rows import Row
from transformer_lab.bench.timing import tokens_per_second
from transformer_lab.bench.workloads import Size, adamw, random_batch, train_step
from transformer_lab.model import Seq2SeqTransformer

DROPOUT = 0.1


def build(size: Size, norm: str, peer: bool = False, dropout: float = DROPOUT):
    """Our model (or the peer) at ``size`` and its optimizer, in train mode."""
    torch.manual_seed(0)
    model_class = TorchTransformerPeer if peer else Seq2SeqTransformer
    model = model_class(**size.model_kwargs(norm, dropout), max_len=size.length)
    model = model.to(size.device).train()
    return model, adamw(model)


def throughput(size: Size, norm: str, calls: int, rounds: int) -> Row:
    """Tokens per second of forward + backward + AdamW, dropout 0.1, ours vs the peer."""
    (ours, ours_opt), (peer, peer_opt) = build(size, norm), build(size, norm, peer=True)
    batch = random_batch(size)
    return tokens_per_second(
        f"train tokens/s, {size.label} {norm}-norm: ours / nn.Transformer (higher is better)",
        size.tokens,
        lambda: train_step(ours, ours_opt, batch),
        lambda: train_step(peer, peer_opt, batch),
        calls=calls,
        rounds=rounds,
        warmup=3,
    )
