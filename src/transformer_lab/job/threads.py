"""How many torch threads a run gets on a CPU: its ``threads`` setting.

torch's default is one intra-op thread per core. A thread that finds its core taken by
other work makes every parallel operation wait for it: beside one busy process, the main
job at 2 threads on 2 cores took several times as long as at 1 thread, while on an idle
machine the second thread saves a quarter to a third of the time, at every model size
measured (docs/performance.md, *Threads*). So ``threads: auto`` counts the cores that
other work leaves free when the job starts and uses those; a number pins it, and
``OMP_NUM_THREADS``, when set, is left to torch.
"""

import os
import time
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


def set_job_threads(setting: int | str) -> str | None:
    """Apply the run's ``threads`` setting to torch, unless ``OMP_NUM_THREADS`` chose.
    Returns what was chosen and why, for the run's log."""
    if "OMP_NUM_THREADS" in os.environ:
        return None
    if setting == AUTO:
        busy = busy_cores()
        available = cores()
        threads = free_cores(available, machine_cores(), busy)
        why = f"threads=auto: {available} cores, {busy or 0:.1f} busy with other work"
    else:
        threads, why = setting, "threads"
    torch.set_num_threads(threads)
    return f"torch threads: {threads} ({why})"
