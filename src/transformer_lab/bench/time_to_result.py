"""The main job's time to its result: the job as it ships, stopping once ``val/seq_acc``
is at its target at two validations in a row (``stop_at_seq_acc``), against the same job
trained its whole max_steps (``stop_at_seq_acc=null``), each timed from start to exit as
a user waits for it: imports, every validation, the test and the samples included.

Both run in a subprocess on the benchmark's thread count (``OMP_NUM_THREADS``), taking
turns over rounds like every row; with the same seed each reaches the same result every
time, so a round differs from the next only by the machine's load.
"""

import os

import torch

from transformer_lab.bench.rows import Row
from transformer_lab.bench.sweeps import train
from transformer_lab.bench.timing import seconds_per_call


def main_job_time_to_result(rounds: int) -> Row:
    """Seconds of the stopping main job over the fixed-budget one (lower is better); the
    row's name gives the step each ended at and its ``test/seq_acc``."""
    env = {**os.environ, "OMP_NUM_THREADS": str(torch.get_num_threads())}
    ended: dict[str, dict] = {}  # the last round's metrics.json of each side

    def job(name: str, arguments: list[str]) -> None:
        (ended[name],) = train(arguments, env)

    seconds = seconds_per_call(
        {
            "stop": lambda: job("stop", []),
            "fixed": lambda: job("fixed", ["stop_at_seq_acc=null"]),
        },
        calls=1,
        rounds=rounds,
        warmup=0,
        row="main job: stop at the target / whole max_steps",
    )
    stop, fixed = ended["stop"], ended["fixed"]
    return Row(
        f"main job seconds, start to exit: stop at the target (step {stop['global_step']}, "
        f"test/seq_acc {stop['test/seq_acc']:.3f}) / fixed {fixed['global_step']:,} steps "
        f"(test/seq_acc {fixed['test/seq_acc']:.3f}) (lower is better)",
        seconds["stop"],
        seconds["fixed"],
        "s",
    )
