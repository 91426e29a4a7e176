"""What the sweep-start check costs, in CPU seconds per 100 jobs::

    OMP_NUM_THREADS=1 python -m transformer_lab.bench.sweep_check [override ...]

The check (:class:`~transformer_lab.sweep.checks.ConfigCheck`'s ``on_multirun_start``)
composes and checks every job of a grid sweep in the launching process before the first
job starts, so a user waits for it on every ``-m``. It is timed alone: the sweep's own
config is composed first, as Hydra composes it for the callbacks (Hydra's start, not the
check's). ``time.process_time`` counts this process's CPU time, which other work on a
shared machine disturbs much less than the wall clock; the median of ``ROUNDS`` rounds is
kept, after an untimed round (the first imports what it builds). Without overrides, the
sweeps of ``SWEEPS``: 100 seeds, and two 100-job grids over norm placement, positional
encoding and seed, with 4 and with 20 combinations of config groups (Hydra composes each
combination once, :mod:`transformer_lab.config.jobs`).
"""

import io
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr

from hydra import initialize_config_module
from hydra.core.global_hydra import GlobalHydra
from hydra.types import RunMode
from omegaconf import DictConfig

from transformer_lab.config.jobs import job_configs, job_overrides
from transformer_lab.console import ignore, quiet_library_notices
from transformer_lab.sweep import (
    naming,  # noqa: F401 (registers ${job_name:}, before Hydra composes)
    search_space,  # noqa: F401 (registers ${warmup_range:})
    threads,  # noqa: F401 (registers ${sweep_n_jobs:})
)
from transformer_lab.sweep.checks import ConfigCheck

ROUNDS = 3
SWEEPS = {
    "100 seeds": ["seed=range(100)"],
    "2 norms x 2 encodings x 25 seeds": [
        "model/norm=pre,post",
        "model/pos_encoding=sinusoidal,rotary",
        "seed=range(25)",
    ],
    "4 norms x 5 encodings x 5 seeds": [
        "model/norm=pre,post,sandwich,deepnorm",
        "model/pos_encoding=sinusoidal,learned,rotary,alibi,none",
        "seed=range(5)",
    ],
}


def cpu_seconds(call) -> float:
    """The median CPU seconds of ``call()`` over ``ROUNDS`` rounds, what it prints on stderr
    (the check's warnings, which the untimed round has shown) not shown again."""
    rounds = []
    for _ in range(ROUNDS):
        with redirect_stderr(io.StringIO()):
            start = time.process_time()
            call()
            rounds.append(time.process_time() - start)
    return statistics.median(rounds)


@contextmanager
def sweep(overrides: list[str]) -> Iterator[DictConfig]:
    """The sweep's own config, as Hydra composes it for the callbacks (Hydra's start, not
    the check's), with Hydra initialised around it."""
    with initialize_config_module("transformer_lab.conf", version_base="1.3"):
        loader = GlobalHydra.instance().config_loader()
        multirun = [*overrides, "hydra.mode=MULTIRUN"]
        yield loader.load_configuration("train", multirun, run_mode=RunMode.MULTIRUN)


def seconds_per_100_jobs(overrides: list[str]) -> tuple[int, float, float]:
    """The sweep's number of jobs; the median CPU seconds per 100 jobs of its check, and of
    the part of it that composes the jobs' configs (Hydra's, once per combination of config
    groups and other overrides, :func:`~transformer_lab.config.jobs.job_configs`)."""
    with sweep(overrides) as config:
        jobs = len(job_overrides(config))
        ConfigCheck().on_multirun_start(config)  # untimed: the first imports what it builds
        check = cpu_seconds(lambda: ConfigCheck().on_multirun_start(config))
        composing = cpu_seconds(lambda: list(job_configs(config)))
    return jobs, check * 100 / jobs, composing * 100 / jobs


def main() -> None:
    quiet_library_notices()
    ignore("launcher_schema")  # as a sweep's own start does (train.py)
    sweeps = {" ".join(sys.argv[1:]): sys.argv[1:]} if sys.argv[1:] else SWEEPS
    print("| sweep | jobs | CPU s per 100 jobs | of which composing |\n|---|--:|--:|--:|")
    for name, overrides in sweeps.items():
        jobs, check, composing = seconds_per_100_jobs(overrides)
        print(f"| {name} | {jobs} | {check:.2f} | {composing:.2f} |")


if __name__ == "__main__":
    main()
