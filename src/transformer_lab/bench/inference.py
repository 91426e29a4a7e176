"""Inference paths: greedy decoding with the KV cache against full recomputation, and the
attention-map path (weights returned) against the fast path."""

import torch

from transformer_lab.bench.rows import Row
from transformer_lab.bench.timing import tokens_per_second
from transformer_lab.bench.workloads import Size, random_batch
from transformer_lab.model import Seq2SeqTransformer
from transformer_lab.tokens import EOS


def decoder(size: Size, new_tokens: int) -> Seq2SeqTransformer:
    """A model at ``size`` (dropout 0.1, in eval mode) that never emits EOS.

    A random model would end rows at arbitrary points; with EOS out of reach every row
    decodes all ``new_tokens``, so both sides do the same, full amount of work.
    """
    model = (
        Seq2SeqTransformer(**size.model_kwargs("post", 0.1), max_len=new_tokens + 1, init_seed=0)
        .to(size.device)
        .eval()
    )
    with torch.no_grad():
        model.output.bias[EOS] = -1e4
    return model


def greedy_outputs(size: Size, new_tokens: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Greedy outputs ``[B, 1 + new_tokens]`` with and without the cache."""
    model, src = decoder(size, new_tokens), random_batch(size)["src"]
    return tuple(model.generate(src, new_tokens, use_cache=c) for c in (True, False))


def greedy(size: Size, new_tokens: int, rounds: int) -> Row:
    model, src = decoder(size, new_tokens), random_batch(size)["src"]
    cached, recomputed = (model.generate(src, new_tokens, use_cache=c) for c in (True, False))
    same = "identical outputs" if torch.equal(cached, recomputed) else "OUTPUTS DIFFER"
    return tokens_per_second(
        f"greedy tokens/s, {new_tokens} new x batch {size.batch}, {size.label}: KV cache / "
        f"recompute ({same}; higher is better)",
        size.batch * new_tokens,
        lambda: model.generate(src, new_tokens, use_cache=True),
        lambda: model.generate(src, new_tokens, use_cache=False),
        calls=1,
        rounds=rounds,
        warmup=0,
    )


def attention_maps(size: Size, calls: int, rounds: int) -> Row:
    """Eval forward passes with per-layer attention weights returned, against without."""
    model = (
        Seq2SeqTransformer(**size.model_kwargs("post", 0.1), max_len=size.length, init_seed=0)
        .to(size.device)
        .eval()
    )
    batch = random_batch(size)

    def forward(return_attention: bool):
        with torch.no_grad():
            return model(batch["src"], batch["tgt_in"], return_attention=return_attention)

    return tokens_per_second(
        f"eval forward tokens/s, {size.label}: attention maps returned / fast path "
        "(higher is better)",
        size.tokens,
        lambda: forward(True),
        lambda: forward(False),
        calls=calls,
        rounds=rounds,
        warmup=2,
    )
