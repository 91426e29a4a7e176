"""One process owns a run folder at a time (DESIGN.md, *Records*).

Two processes writing one run folder (a resume started while the run still trains, a
sweep restarted while the orphaned workers of its killed first start still train the
same job folders) would interleave two trainings' checkpoints, events and records: two
``metrics:`` writes and a curve with each step twice. So a job holds an operating-system
lock on ``<run>/.run.lock`` from the moment it knows its folder until its record is
written (:func:`owning`); a second process refuses in one line (:class:`FolderInUse`). The
operating system drops the lock with the process, however it ends (kill -9 included), so
no stale lock outlives its owner. A :class:`~filelock.FileLock`: ``flock`` on POSIX, the
system's own lock on Windows. DDP's other ranks write nothing there, and take no lock.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout
from lightning.pytorch.utilities.rank_zero import rank_zero_only

from transformer_lab.config.validation import ConfigError
from transformer_lab.runs.layout import LOCK


class FolderInUse(ConfigError):
    """Another process writes into the run folder this job would write into."""

    def __init__(self, folder: Path):
        super().__init__(
            f"{folder} is in use by another process (a run, a resume or a sweep's job "
            f"writing into it holds {LOCK}); allowed: wait until it ends, or stop it"
        )
        self.folder = folder

    def __reduce__(self):  # rebuilt from its parts, e.g. sent back by a sweep's worker
        return FolderInUse, (self.folder,)


@contextmanager
def owning(folder: Path) -> Iterator[None]:
    """Hold ``folder``'s lock while the block runs, or raise :class:`FolderInUse`."""
    if rank_zero_only.rank != 0:
        yield
        return
    folder.mkdir(parents=True, exist_ok=True)
    lock = FileLock(folder / LOCK)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise FolderInUse(folder) from None
    try:
        yield
    finally:
        lock.release()
