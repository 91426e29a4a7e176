"""How much of the machine a training step uses: FLOP/s against dense matmul, peak memory.

FLOPs per step come from ``torch.utils.flop_counter`` (matmuls and attention, forward and
backward), so "model FLOP/s" counts the work the model needs, not what the kernels did.
The step rate is the one measured against the peer, and the machine's dense matmul rate
is measured in the same process, on the same threads.

Peak memory is the bytes held before the step (weights, buffers, optimizer state) plus the
highest running total of what the step allocates and frees. A GPU counts that itself
(``torch.cuda.max_memory_allocated``); a CPU has no such counter, so the profiler's
allocation events give it there.
"""

import torch
from torch.profiler import ProfilerActivity, profile
from torch.utils.flop_counter import FlopCounterMode

from transformer_lab.bench.rows import Row
from transformer_lab.bench.timing import seconds_per_call
from transformer_lab.bench.training import build
from transformer_lab.bench.workloads import Size, random_batch, train_step
from transformer_lab.private_apis import profiled_events

MiB = 2**20


def matmul_flops_per_second(n: int, calls: int, rounds: int, device: str = "cpu") -> float:
    """Dense fp32 ``[n, n] @ [n, n]`` FLOP/s: the machine's practical peak."""
    a, b = torch.randn(n, n, device=device), torch.randn(n, n, device=device)
    seconds = seconds_per_call({"mm": lambda: a @ b}, calls, rounds, 2, f"dense {n}x{n} matmul")
    return 2 * n**3 / seconds["mm"]


def model_flop_fraction(size: Size, norm: str, tokens_per_second: float, matmul: float) -> Row:
    """Model FLOP/s of a training step, at the throughput measured for it, over ``matmul``."""
    ours, optimizer = build(size, norm)
    with FlopCounterMode(display=False) as counter:
        train_step(ours, optimizer, random_batch(size))
    steps_per_second = tokens_per_second / size.tokens
    return Row(
        f"train FLOP/s, {size.label} {norm}-norm: ours / dense fp32 matmul "
        "(utilisation; higher is better)",
        counter.get_total_flops() * steps_per_second,
        matmul,
        "FLOP/s",
    )


def _resident_bytes(model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> int:
    tensors = [*model.parameters(), *model.buffers()]
    tensors += [
        t
        for state in optimizer.state.values()
        for t in state.values()
        if isinstance(t, torch.Tensor)
    ]
    return sum(t.numel() * t.element_size() for t in tensors)


def peak_step_bytes(model: torch.nn.Module, optimizer, batch: dict) -> int:
    """Resident bytes plus the highest running total a step allocates (after warm-up)."""
    train_step(model, optimizer, batch)  # the optimizer state exists from here on
    if batch["src"].is_cuda:
        torch.cuda.synchronize()
        held = torch.cuda.memory_allocated()  # everything alive now, this model included
        torch.cuda.reset_peak_memory_stats()
        train_step(model, optimizer, batch)
        torch.cuda.synchronize()
        return _resident_bytes(model, optimizer) + torch.cuda.max_memory_allocated() - held
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        train_step(model, optimizer, batch)
    events = profiled_events(prof)
    changes = sorted((e.start_ns(), e.nbytes()) for e in events if e.name() == "[memory]")
    running = highest = 0
    for _, nbytes in changes:
        running += nbytes
        highest = max(highest, running)
    return _resident_bytes(model, optimizer) + highest


def peak_memory(size: Size, norm: str) -> Row:
    batch = random_batch(size)
    return Row(
        f"train-step peak memory, {size.label} {norm}-norm: ours / nn.Transformer "
        "(lower is better)",
        peak_step_bytes(*build(size, norm), batch) / MiB,
        peak_step_bytes(*build(size, norm, peer=True), batch) / MiB,
        "MiB",
    )
