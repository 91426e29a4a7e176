"""How many torch threads a run gets on a CPU: its ``threads`` setting.

torch's default is one intra-op thread per core. A thread that finds its core taken by
other work makes every parallel operation wait for it: beside one busy process, the main
job at 2 threads on 2 cores took several times as long as at 1 thread, while on an idle
machine the second thread saves a quarter to a third of the time, at every model size
measured (docs/performance.md, *Threads*). So ``threads: auto`` counts the cores that
other work leaves free when the run starts and uses those; a number pins it, and
``OMP_NUM_THREADS``, when set, decides instead.

A seed's trajectory depends on the thread count (a reduction split over more threads adds
in another order), so the count is part of what a run computed: the choice, with what
decided it, is recorded (:class:`ThreadChoice`; ``metrics.json``'s ``torch_threads``,
``environment.json``'s ``threads_decided_by``). A sweep decides once for all its jobs
(:mod:`transformer_lab.sweep.threads`).
"""

import os
import time
from dataclasses import dataclass
from pathlib import Path

import joblib
import torch

AUTO = "auto"
PROC_STAT = Path("/proc/stat")


def busy_cores(window: float = 0.2) -> float | None:
    """How many of the machine's cores other work kept busy over the next ``window``
    seconds, while this process sleeps (from ``/proc/stat``); None where there is none."""
    try:
        before = _cpu_times()
        time.sleep(window)
        after = _cpu_times()
    except OSError:
        return None
    total, idle = after[0] - before[0], after[1] - before[1]
    return machine_cores() * (total - idle) / total if total else 0.0


def _cpu_times() -> tuple[int, int]:
    """All cores' time so far and the idle part of it (idle and iowait), in clock ticks."""
    fields = [int(n) for n in PROC_STAT.read_text().split("\n", 1)[0].split()[1:]]
    return sum(fields), fields[3] + fields[4]


def cores() -> int:
    """The cores this process may use (CPU affinity and cgroup quotas respected)."""
    return joblib.cpu_count()


def machine_cores() -> int:
    """The machine's cores, all of which ``/proc/stat`` counts."""
    return os.cpu_count() or 1


def free_cores(available: int, machine: int, busy: float | None) -> int:
    """Of the ``available`` cores (this process's share of the ``machine``'s), those that
    ``busy`` cores of other work leave, at least one; all when that cannot be measured."""
    return available if busy is None else max(1, min(available, machine - round(busy)))


@dataclass(frozen=True)
class ThreadChoice:
    """A torch thread count and what decided it, in words (``threads=auto: 2 cores, 1.0
    busy with other work``)."""

    threads: int
    why: str

    @property
    def line(self) -> str:
        """The run's log line."""
        return f"torch threads: {self.threads} ({self.why})"


def choose_threads(setting: int | str) -> ThreadChoice:
    """What a run's ``threads`` setting gives here and now: ``OMP_NUM_THREADS`` where the
    user set it (torch read it at its import), else the number, else (``auto``) the cores
    that other work leaves free over the next fifth of a second."""
    if "OMP_NUM_THREADS" in os.environ:
        return ThreadChoice(
            torch.get_num_threads(), f"OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}"
        )
    if setting != AUTO:
        return ThreadChoice(int(setting), f"threads={setting}")
    busy, available = busy_cores(), cores()
    threads = free_cores(available, machine_cores(), busy)
    return ThreadChoice(
        threads, f"threads=auto: {available} cores, {busy or 0:.1f} busy with other work"
    )
