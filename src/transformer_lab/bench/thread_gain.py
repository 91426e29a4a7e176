"""What a second intra-op thread gains by model size, on an idle CPU::

    OMP_NUM_THREADS=2 python -m transformer_lab.bench.thread_gain   # about 6 minutes

One training step (forward, backward, AdamW; dropout 0.1) timed at 1 and at 2 threads in
alternating rounds, median kept, for the main job's model and three larger ones: where
the second thread starts to pay decides nothing alone (docs/performance.md, *Threads*),
but it says what an idle machine gives up at 1 thread.
"""

import torch

from transformer_lab.bench.timing import seconds_per_call
from transformer_lab.bench.training import build
from transformer_lab.bench.workloads import D256, MAIN, Size, random_batch, train_step

# each size with the steps timed per turn: about half a second of work on a 2-core CPU
SIZES = [
    (MAIN, 20),
    (Size("d128", d_model=128, num_heads=4, layers=2, d_ff=512, batch=64, length=32, vocab=64), 3),
    (D256, 2),
    (
        Size(
            "d512", d_model=512, num_heads=8, layers=6, d_ff=2048, batch=32, length=64, vocab=8000
        ),
        1,
    ),
]
ROUNDS = 7


def step_seconds(size: Size, threads: tuple[int, int], calls: int = 1) -> dict[int, float]:
    """The median seconds of one training step at each thread count, the counts taking
    turns (:func:`~transformer_lab.bench.timing.seconds_per_call`)."""
    model, optimizer = build(size, "post")
    batch = random_batch(size)

    def step_on(n: int):
        def step() -> None:
            torch.set_num_threads(n)
            train_step(model, optimizer, batch)

        return step

    return seconds_per_call({n: step_on(n) for n in threads}, calls, ROUNDS, warmup=1)


def main() -> None:
    most = torch.get_num_threads()
    if most < 2:
        raise SystemExit("thread_gain compares 1 thread with more: set OMP_NUM_THREADS=2 or more")
    print(f"| model | 1 thread | {most} threads | speed-up |\n|---|--:|--:|--:|")
    for size, calls in SIZES:
        seconds = step_seconds(size, (1, most), calls)
        one, many = seconds[1], seconds[most]
        print(f"| {size.label} | {one * 1e3:.1f} ms | {many * 1e3:.1f} ms | {one / many:.2f}x |")


if __name__ == "__main__":
    main()
