"""``python -m transformer_lab.bench [--quick] [--time-to-result] [--json PATH]
[--markdown PATH] [--threads N] [--device cpu|cuda]``.

Measures, in one process: training throughput of our model against the same model on
``torch.nn.Transformer``; the Lightning fit loop against a plain PyTorch loop; greedy
decoding with the KV cache against recomputation; the attention-map path against the
fast path; model FLOP/s against this machine's dense matmul; peak step memory; the
``compile`` and ``trainer.precision=bf16-mixed`` options; one thread against
torch's default (on a CPU); AdamW's fused kernels against its loop. ``--quick`` runs a
toy version of everything (the smoke test) whose numbers mean nothing. ``--device cuda``
runs on the first GPU at the paper's base model's size and the main job's, synchronizing
before every clock reading.

Two rows time the command line instead (skipped by ``--quick``: they take minutes): a
sweep's wall time with the parallel launcher against the basic one, on the same jobs; and
the main job stopping at its target against the same job trained its whole max_steps.
``--time-to-result`` runs only that last row and the two step options it goes with (fused
AdamW, ``compile``), in one run.
"""

import argparse
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from transformer_lab.bench import (
    efficiency,
    inference,
    loop,
    options,
    sweeps,
    time_to_result,
    training,
)
from transformer_lab.bench.progress import DISPLAY
from transformer_lab.bench.rows import Row, print_table, unavailable, write_json, write_markdown
from transformer_lab.bench.workloads import BASE, D256, MAIN, QUICK, Size
from transformer_lab.console import quiet_library_notices


@dataclass(frozen=True)
class Plan:
    sizes: tuple[Size, ...]  # the large one first
    calls: dict[str, int]  # training steps per timed round, by size label
    rounds: int
    loop_overrides: tuple[str, ...]  # on top of the main job's config
    loop_steps: int
    new_tokens: int
    matmul_n: int
    compile: bool
    sweep: tuple[int, int, int] | None  # jobs, steps per job, rounds of the launcher row
    fused_rounds: int  # rounds of one training step each, fused and for-loop AdamW
    result_rounds: int | None  # rounds of the main job's time to its result


FULL = Plan(
    sizes=(D256, MAIN),
    calls={"d256": 4, "d64": 20},  # d256: 2 steps a round left the ratio within ±5% noise
    rounds=5,
    loop_overrides=("data.train_size=20000",),
    loop_steps=100,
    new_tokens=128,
    matmul_n=1024,
    compile=True,
    sweep=(4, 1000, 2),  # a round is two whole sweeps, about 5 minutes on 2 cores; shorter
    # jobs measure mostly the workers' start (1.33x at 300 steps, 1.48x at 600, 1.55x at 1000)
    fused_rounds=41,  # a 5% difference: 21 rounds gave 1.02-1.05x, 41 rounds 1.02-1.09x
    # under a load of 11 on 2 cores; rounds of 5 or 20 steps each, 0.91-1.06x
    result_rounds=1,  # two main jobs, about 5 minutes on 2 cores
)
GPU = replace(  # the paper's base model's width and depth, and the main job's model
    FULL, sizes=(BASE, MAIN), calls={"d512": 10, "d64": 50}, loop_steps=200, matmul_n=8192
)
QUICK_PLAN = Plan(
    sizes=(QUICK,),
    calls={"d16": 1},
    rounds=1,
    loop_overrides=(
        *("data.train_size=256", "data.val_size=8", "data.test_size=8", "data.batch_size=8"),
        *("model.d_model=16", "model.num_heads=2", "model.d_ff=32"),
    ),
    loop_steps=2,
    new_tokens=8,
    matmul_n=64,
    compile=False,
    sweep=None,
    fused_rounds=1,
    result_rounds=None,
)


def on(plan: Plan, device: str) -> Plan:
    """``plan`` with every size on ``device``."""
    return replace(plan, sizes=tuple(replace(size, device=device) for size in plan.sizes))


def run(plan: Plan) -> list[Row]:
    big, main = plan.sizes[0], plan.sizes[-1]
    calls, rounds, device = plan.calls, plan.rounds, main.device
    trained = {
        (size, norm): training.throughput(size, norm, calls[size.label], rounds)
        for size in plan.sizes
        for norm in ("post", "pre")
    }
    rows = list(trained.values())
    rows.append(loop.overhead(list(plan.loop_overrides), plan.loop_steps, rounds, device=device))
    rows.append(inference.greedy(replace(main, batch=16), plan.new_tokens, rounds))
    rows.append(inference.attention_maps(big, calls[big.label], rounds))
    matmul = efficiency.matmul_flops_per_second(plan.matmul_n, 3, rounds, device)
    rows += [
        efficiency.model_flop_fraction(size, "post", trained[size, "post"].ours, matmul)
        for size in plan.sizes
    ]
    rows.append(efficiency.peak_memory(big, "post"))
    rows += [options.bf16_mixed(size, calls[size.label], rounds) for size in plan.sizes]
    rows.append(options.one_thread(main, calls[main.label], rounds))
    if plan.sweep:
        rows.append(sweeps.launcher_speedup(*plan.sweep))
    else:
        why = "skipped by --quick (two real sweeps take minutes)"
        rows.append(unavailable("sweep jobs/min: joblib / basic launcher", "jobs/min", why))
    return rows + time_to_result_rows(plan)


def time_to_result_rows(plan: Plan) -> list[Row]:
    """What the main job's time to its result is made of: the stop at its target against
    its whole max_steps, and a step's speed with AdamW fused and with ``compile``
    (``--time-to-result`` runs these alone)."""
    main = plan.sizes[-1]
    calls, rounds = plan.calls[main.label], plan.rounds
    rows = [options.fused_adamw(main, plan.fused_rounds)]
    if plan.compile:
        rows += options.compiled(main, calls, rounds)
    else:
        why = "skipped by --quick (compiling takes minutes)"
        rows.append(unavailable("train tokens/s: torch.compile / eager", "tokens/s", why))
    if plan.result_rounds:
        rows.append(time_to_result.main_job_time_to_result(plan.result_rounds))
    else:
        why = "skipped by --quick (two main jobs take minutes)"
        name = "main job seconds, start to exit: stop at the target / whole max_steps"
        rows.append(unavailable(name, "s", why))
    return rows


def main(argv: list[str] | None = None) -> list[Row]:
    parser = argparse.ArgumentParser(
        prog="python -m transformer_lab.bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="a toy run for the smoke test")
    parser.add_argument(
        "--time-to-result",
        action="store_true",
        help="only the main job's time to its result: stop at the target / fixed steps, "
        "fused / for-loop AdamW, torch.compile / eager (14 minutes on 2 busy cores)",
    )
    parser.add_argument("--json", type=Path, help="also write the rows to this JSON file")
    parser.add_argument("--markdown", type=Path, help="also write the table as Markdown")
    parser.add_argument("--threads", type=int, help="torch intra-op threads (default: torch's)")
    parser.add_argument(
        "--device",
        choices=("cpu", "cuda"),
        default="cpu",
        help="cpu (default), or cuda: the d512 and d64 sizes on the first GPU",
    )
    args = parser.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch sees no CUDA GPU here; allowed on this machine: cpu")
    if args.threads:
        torch.set_num_threads(args.threads)
    quiet_library_notices()
    plan = QUICK_PLAN if args.quick else GPU if args.device == "cuda" else FULL
    with DISPLAY:
        rows = (time_to_result_rows if args.time_to_result else run)(on(plan, args.device))
    where = torch.cuda.get_device_name() if args.device == "cuda" else "CPU"
    print_table(rows, f"transformer_lab.bench ({where}, {torch.get_num_threads()} threads)")
    if args.json:
        write_json(rows, args.json)
    if args.markdown:
        write_markdown(rows, args.markdown)
    return rows


def cli() -> None:
    """``tlab-bench``: :func:`main` without its rows as the exit status."""
    main()


if __name__ == "__main__":
    cli()
