"""What a second intra-op thread gains by model size, on an idle CPU::

    OMP_NUM_THREADS=2 python -m transformer_lab.bench.thread_gain   # about 6 minutes

One training step (forward, backward, AdamW; dropout 0.1) timed at 1 and at 2 threads in
alternating rounds, median kept, for the main job's model and three larger ones: where
the second thread starts to pay decides nothing alone (docs/performance.md, *Threads*),
but it says what an idle machine gives up at 1 thread.
"""

import statistics
import time

import torch

from transformer_lab.bench.training import build
from transformer_lab.bench.workloads import D256, MAIN, Size, random_batch, train_step

SIZES = [
    MAIN,
    Size("d128", d_model=128, num_heads=4, layers=2, d_ff=512, batch=64, length=32, vocab=64),
    D256,
    Size("d512", d_model=512, num_heads=8, layers=6, d_ff=2048, batch=32, length=64, vocab=8000),
]
ROUNDS = 7


def step_seconds(size: Size, threads: tuple[int, int]) -> dict[int, float]:
    """The median seconds of one training step at each thread count."""
    model, optimizer = build(size, "post")
    batch = random_batch(size)
    calls = max(2, round(0.5 / _one_step(model, optimizer, batch)))  # ~half a second a turn
    times: dict[int, list[float]] = {n: [] for n in threads}
    for round_ in range(ROUNDS):
        for n in threads if round_ % 2 else threads[::-1]:  # who goes first alternates
            torch.set_num_threads(n)
            train_step(model, optimizer, batch)
            start = time.perf_counter()
            for _ in range(calls):
                train_step(model, optimizer, batch)
            times[n].append((time.perf_counter() - start) / calls)
    return {n: statistics.median(t) for n, t in times.items()}


def _one_step(model, optimizer, batch) -> float:
    start = time.perf_counter()
    train_step(model, optimizer, batch)
    return time.perf_counter() - start


def main() -> None:
    most = torch.get_num_threads()
    if most < 2:
        raise SystemExit("thread_gain compares 1 thread with more: set OMP_NUM_THREADS=2 or more")
    print(f"| model | 1 thread | {most} threads | speed-up |\n|---|--:|--:|--:|")
    for size in SIZES:
        seconds = step_seconds(size, (1, most))
        one, many = seconds[1], seconds[most]
        print(f"| {size.label} | {one * 1e3:.1f} ms | {many * 1e3:.1f} ms | {one / many:.2f}x |")


if __name__ == "__main__":
    main()
