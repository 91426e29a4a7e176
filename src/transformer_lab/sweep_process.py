"""Which process a parallel sweep's worker works for.

A parallel sweep (joblib's loky backend) runs its jobs in worker processes it starts, and
leaves its own pid in their environment. A worker must not ask ``os.getppid()`` for it:
a worker that gets its first job only after the sweep's process was killed (a busy
machine) finds its adoptive parent there, takes that for the sweep, and never sees itself
orphaned. The environment, inherited when the worker started, still names the sweep.

It lives at the top of the package because both sides of a fault need it: the sweep's
launcher (``sweep/``) marks and watches, and the fault points in ``training/``, above
``sweep/`` in the flow, aim ``:parent`` at it.
"""

import os

SWEEP_PID = "TRANSFORMER_LAB_SWEEP_PID"


def mark_sweep_process() -> None:
    """In a parallel sweep's own process, before it starts workers: they inherit the mark."""
    os.environ[SWEEP_PID] = str(os.getpid())


def sweep_process() -> int | None:
    """The pid of the parallel sweep whose worker this process is; ``None`` in any other
    process, the sweep's own included (joblib runs ``n_jobs=1`` sweeps there)."""
    pid = os.environ.get(SWEEP_PID)
    if pid is None or int(pid) == os.getpid():
        return None
    return int(pid)
