"""What the paper figures share: a small task's batches, a model per seed, and a mean over
seeds with its interval."""

import math

import torch

from transformer_lab.data.generation import generate
from transformer_lab.data.tasks import TASKS
from transformer_lab.report.statistics import estimate
from transformer_lab.tokens import FIRST_CONTENT

VOCAB = 16  # 13 content words, as the main job's reverse task


def task_batches(count: int, batch_size: int, seed: int, task="reverse", max_task_len=5) -> list:
    """``count`` batches of ``batch_size`` distinct examples of ``task`` (3..``max_task_len``
    words), each ``{"src", "tgt_in", "tgt_out"}``."""
    generator = torch.Generator().manual_seed(seed)
    src, tgt_in, tgt_out = generate(
        TASKS[task].apply, count * batch_size, VOCAB - FIRST_CONTENT, 3, max_task_len, generator
    )
    return [
        {"src": s, "tgt_in": i, "tgt_out": o}
        for s, i, o in zip(
            src.split(batch_size), tgt_in.split(batch_size), tgt_out.split(batch_size), strict=True
        )
    ]


def model_kwargs(layers: int, d_model: int, seed: int, norm: str = "post") -> dict:
    """A :class:`~transformer_lab.model.Seq2SeqTransformer`'s arguments: ``layers`` per
    stack, 4 heads, d_ff 4 x d_model, no dropout, Xavier draws of ``init_seed=seed``."""
    return dict(
        src_vocab_size=VOCAB,
        tgt_vocab_size=VOCAB,
        d_model=d_model,
        num_heads=4,
        num_encoder_layers=layers,
        num_decoder_layers=layers,
        d_ff=4 * d_model,
        dropout=0.0,
        max_len=32,
        norm=norm,
        init_seed=seed,
    )


def geometric_interval(values: list[float]) -> tuple[float, float, float]:
    """``(centre, low, high)``: the geometric mean over seeds and its 95% t interval, taken
    on the logs (norms span decades and are drawn on a log scale)."""
    logs = estimate([math.log(v) for v in values])
    low = logs.mean if logs.low is None else logs.low
    high = logs.mean if logs.high is None else logs.high
    return math.exp(logs.mean), math.exp(low), math.exp(high)
