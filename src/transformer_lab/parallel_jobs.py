"""What a job of a parallel sweep (``hydra/launcher=joblib``) does around its training.

Jobs side by side share one terminal: two rich progress bars redrawing over each other,
and two jobs' log lines interleaved, are unreadable. So inside a parallel sweep each job
sends everything it prints (the progress bar, Lightning's notices, the log, the test
table) to its own ``train.log``, and the terminal gets one line when a job starts and one
when it ends: its name, its status, and its final ``val/seq_acc`` or its error. The job
also takes its share of the machine: ``cores // n_jobs`` torch threads
(:mod:`transformer_lab.threads`) and, on GPUs, a GPU of its own.

A Hydra callback because ``on_job_start``/``on_job_end`` run in the process that runs the
job (a joblib worker), around the task function, after Hydra set up the job's logging.
"""

import fcntl
import logging
import os
import sys
import time
import warnings
from pathlib import Path

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from transformer_lab.report.runs import read_run
from transformer_lab.threads import gpus, pin_threads, uses_gpus

# conf/hydra/launcher/joblib.yaml shares its name with the plugin's structured config, which
# makes Hydra warn (in every process) that it validates one against the other; ours names
# its own _target_, and the check passes.
SCHEMA_NOTICE = r"\s*'hydra/launcher/joblib' is validated against"
warnings.filterwarnings("ignore", message=SCHEMA_NOTICE)

_gpu_lock = None  # this worker's claim on a GPU, held for the worker's lifetime


def runs_in_parallel(config: DictConfig) -> bool:
    return "joblib" in str(config.hydra.launcher.get("_target_", "")).lower()


def claim_gpu(sweep_dir: Path, count: int) -> int:
    """The index of a GPU no other job of the sweep holds; held until this process ends.

    Workers are reused across jobs and CUDA reads ``CUDA_VISIBLE_DEVICES`` once per
    process, so a worker keeps one GPU; with ``n_jobs`` = GPUs one is always free.
    """
    global _gpu_lock
    for index in range(count):
        lock = open(sweep_dir / f".gpu{index}.lock", "w")  # noqa: SIM115 -- held on purpose
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            continue
        _gpu_lock = lock
        return index
    raise RuntimeError(f"all {count} GPUs are held by other jobs; allowed: n_jobs <= {count}")


def _use_own_gpu(config: DictConfig) -> None:
    if _gpu_lock is not None:  # this worker claimed one for an earlier job
        return
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    devices = visible.split(",") if visible else [str(i) for i in range(gpus())]
    index = claim_gpu(Path(config.hydra.sweep.dir), len(devices))
    os.environ["CUDA_VISIBLE_DEVICES"] = devices[index]


def _say(line: str) -> None:
    """One line on the terminal (file descriptor 1), timestamped like Hydra's log."""
    os.write(1, f"[{time.strftime('%H:%M:%S')}] {line}\n".encode())


def end_line(job_dir: Path) -> str:
    """``done``, ``diverged`` or ``failed`` and what the job's files say about it."""
    run = read_run(job_dir)
    if run.failure:
        return f"failed    {run.name}  {run.failure['error']}: {run.failure['message']}"
    if run.diverged:
        return f"diverged  {run.name}  at step {run.metrics['diverged_at_step']}"
    if run.finished:
        return f"done      {run.name}  val/seq_acc {run.metrics['val/seq_acc']:.3f}"
    return f"ended     {run.name}  without metrics.json or failed.json (see its train.log)"


class ParallelJobs(Callback):
    """Under ``hydra/launcher=joblib``: pin threads, claim a GPU, one terminal line per
    job start and end, everything else into the job's ``train.log``. Other launchers:
    nothing."""

    def on_job_start(self, config: DictConfig, **kwargs) -> None:
        self.active = runs_in_parallel(config)
        if not self.active:
            return
        if uses_gpus(config.trainer.accelerator):
            _use_own_gpu(config)
        threads = pin_threads(config.hydra.launcher.n_jobs)
        job_dir = Path(config.hydra.runtime.output_dir)
        self.started = time.perf_counter()
        _say(f"start     {job_dir.name}  ({threads} torch thread{'s' * (threads > 1)})")
        self._into_log(job_dir / f"{config.hydra.job.name}.log")

    def on_job_end(self, config: DictConfig, **kwargs) -> None:
        if not self.active:
            return
        self._back_to_terminal()
        seconds = time.perf_counter() - self.started
        _say(f"{end_line(Path(config.hydra.runtime.output_dir))}  ({seconds:.0f} s)")

    def _into_log(self, log_file: Path) -> None:
        """Point this process's stdout and stderr (file descriptors 1 and 2, so rich,
        Lightning's own handler and C libraries follow) at the job's log; the root
        logger's console handler goes (its file handler already writes there)."""
        root = logging.getLogger()
        self.console_handlers = [h for h in root.handlers if not isinstance(h, logging.FileHandler)]
        for handler in self.console_handlers:
            root.removeHandler(handler)
        sys.stdout.flush()
        sys.stderr.flush()
        self.saved = os.dup(1), os.dup(2)
        log_fd = os.open(log_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        os.close(log_fd)

    def _back_to_terminal(self) -> None:
        """Undo :meth:`_into_log`: a worker runs further jobs, or the sweep goes on here."""
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, saved in zip((1, 2), self.saved, strict=True):
            os.dup2(saved, fd)
            os.close(saved)
        for handler in self.console_handlers:
            logging.getLogger().addHandler(handler)
