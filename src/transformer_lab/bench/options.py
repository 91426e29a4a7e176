"""The speed options a run can switch on: ``compile``, ``trainer.precision`` and
the intra-op thread count (``OMP_NUM_THREADS``, on a CPU); and one the run picks itself,
AdamW's fused kernels.

Each is measured against the plain fp32 eager model on torch's default threads, at the
same size, dropout 0.1, in the same process. ``torch.compile`` needs a working compiler
toolchain; where it fails, the row says so instead of the benchmark crashing. Its first
step (tracing and code generation, or a cache hit) is reported apart from the
steady-state throughput, since on a short run that one step can outweigh everything the
compiled steps save.
"""

import time

import torch

from transformer_lab.bench.rows import Row, unavailable
from transformer_lab.bench.timing import tokens_per_second
from transformer_lab.bench.training import build
from transformer_lab.bench.workloads import Size, adamw, loss, random_batch, train_step


def compiled(size: Size, calls: int, rounds: int) -> list[Row]:
    """Steady-state tokens/s and first-step seconds, ``torch.compile`` vs eager."""
    name = f"train tokens/s, {size.label} post-norm: torch.compile / eager (higher is better)"
    model, optimizer = build(size, "post")
    eager, eager_optimizer = build(size, "post")
    batch = random_batch(size)
    model.compile()
    start = time.perf_counter()
    try:
        train_step(model, optimizer, batch)
    except Exception as error:  # no compiler, an unsupported op: report, don't crash
        return [unavailable(name, "tokens/s", f"{type(error).__name__}: {error}"[:120])]
    first_compiled = time.perf_counter() - start
    start = time.perf_counter()
    train_step(eager, eager_optimizer, batch)
    first_eager = time.perf_counter() - start
    steady = tokens_per_second(
        name,
        size.tokens,
        lambda: train_step(model, optimizer, batch),
        lambda: train_step(eager, eager_optimizer, batch),
        calls=calls,
        rounds=rounds,
        warmup=2,
    )
    return [
        steady,
        Row(
            f"first train step s, {size.label} post-norm: torch.compile / eager (lower is better)",
            first_compiled,
            first_eager,
            "s",
        ),
    ]


def fused_adamw(size: Size, rounds: int) -> Row:
    """A training step with AdamW's fused kernels (what the main job runs where they fit,
    ``training/module.py``) against its per-parameter loop, the same model and batch. The
    sides take turns step by step, the finest interleaving there is: the difference is a
    few percent, which outside load drifting within a round of many steps would drown."""
    name = f"train tokens/s, {size.label} post-norm: fused AdamW / for-loop AdamW"
    fused_model, _ = build(size, "post")
    loop_model, _ = build(size, "post")
    try:
        fused, loop = adamw(fused_model, fused=True), adamw(loop_model, fused=False)
        train_step(fused_model, fused, random_batch(size))
    except RuntimeError as error:  # a device without the kernels
        return unavailable(name, "tokens/s", f"{type(error).__name__}: {error}"[:120])
    batch = random_batch(size)
    return tokens_per_second(
        f"{name} (higher is better)",
        size.tokens,
        lambda: train_step(fused_model, fused, batch),
        lambda: train_step(loop_model, loop, batch),
        calls=1,
        rounds=rounds,
        warmup=2,
    )


def bf16_mixed(size: Size, calls: int, rounds: int) -> Row:
    """``trainer.precision=bf16-mixed`` is autocast to bfloat16 around the forward pass."""
    model, optimizer = build(size, "post")
    batch = random_batch(size)

    def mixed_step() -> None:
        with torch.autocast(torch.device(size.device).type, dtype=torch.bfloat16):
            step_loss = loss(model, batch)
        step_loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return tokens_per_second(
        f"train tokens/s, {size.label} post-norm: bf16-mixed / fp32 (higher is better)",
        size.tokens,
        mixed_step,
        lambda: train_step(model, optimizer, batch),
        calls=calls,
        rounds=rounds,
        warmup=2,
    )


def one_thread(size: Size, calls: int, rounds: int) -> Row:
    """One intra-op thread against torch's default, at the same size.

    Small matmuls gain little from a second thread and pay for every hand-off, and when
    other jobs share the cores, waiting threads steal time from each other's work.
    """
    name = f"train tokens/s, {size.label} post-norm: 1 thread / {torch.get_num_threads()} threads"
    threads = torch.get_num_threads()
    if torch.device(size.device).type != "cpu":
        return unavailable(name, "tokens/s", f"CPU threads; this run is on {size.device}")
    if threads == 1:
        return unavailable(name, "tokens/s", "torch already uses 1 thread")
    model, optimizer = build(size, "post")
    batch = random_batch(size)

    def step_on(n: int) -> None:
        torch.set_num_threads(n)
        try:
            train_step(model, optimizer, batch)
        finally:
            torch.set_num_threads(threads)

    return tokens_per_second(
        f"{name} (higher is better)",
        size.tokens,
        lambda: step_on(1),
        lambda: step_on(threads),
        calls=calls,
        rounds=rounds,
        warmup=2,
    )
