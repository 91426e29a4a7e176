"""Timing on a shared, noisy CPU: warm up, alternate the contenders, report medians.

Other processes come and go while a benchmark runs, so timing A for a while and then B
for a while would compare two different machines. :func:`seconds_per_call` instead runs
the contenders in alternating rounds (the order flipped every round) and keeps each
one's median round, which drops rounds that a burst of outside load slowed down. On a GPU
the clock is read only after :func:`synchronize`, so a round counts the kernels it queued.
"""

import statistics
import time
from collections.abc import Callable

import torch

from transformer_lab.bench import progress
from transformer_lab.bench.rows import Row


def synchronize() -> None:
    """Wait for queued GPU work, where a GPU is in use (a no-op on a CPU run)."""
    if torch.cuda.is_initialized():
        torch.cuda.synchronize()


def seconds_per_call(
    contenders: dict[str, Callable[[], object]],
    calls: int,
    rounds: int,
    warmup: int,
    row: str = "",
) -> dict[str, float]:
    """The median over ``rounds`` of each contender's mean seconds per call."""
    for fn in contenders.values():
        for _ in range(warmup):
            fn()
    synchronize()
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    order = list(contenders)
    for _ in progress.rounds(rounds, row):
        for name in order:
            fn = contenders[name]
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            synchronize()
            samples[name].append((time.perf_counter() - start) / calls)
        order.reverse()
    return {name: statistics.median(times) for name, times in samples.items()}


def tokens_per_second(
    name: str,
    tokens: int,
    ours: Callable[[], object],
    peer: Callable[[], object],
    *,
    calls: int,
    rounds: int,
    warmup: int,
) -> Row:
    """A throughput row: ``ours`` against ``peer``, each call processing ``tokens``."""
    seconds = seconds_per_call({"ours": ours, "peer": peer}, calls, rounds, warmup, name)
    return Row(name, tokens / seconds["ours"], tokens / seconds["peer"], "tokens/s")
