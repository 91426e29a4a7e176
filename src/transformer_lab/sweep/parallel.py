"""What a job of a parallel sweep (``hydra/launcher=joblib``) does around its training.

Jobs side by side share one terminal: two rich progress bars redrawing over each other,
and two jobs' log lines interleaved, are unreadable. So inside a parallel sweep each job
sends everything it prints (the progress bar, Lightning's notices, the log, the test
table) to its own ``train.log``, and the terminal gets one line when a job starts and one
when it ends: its name, its status, and its final ``val/seq_acc`` or its error. The job
also takes its share of the machine: ``cores // n_jobs`` torch threads, decided at the
sweep's start (:mod:`transformer_lab.sweep.threads`), and, on GPUs, a GPU of its own, or
an even share of the GPUs where ``n_jobs`` is above their number.

Ctrl-C reaches the sweep's process and every worker (one process group). Each running job
saves ``last.ckpt`` at the end of its batch and says so on its end line, with the command
that resumes it; no further job starts (a stop file in the sweep folder tells the workers);
the sweep then ends with status 130 (:mod:`transformer_lab.sweep.summary`). A second Ctrl-C
stops everything at once, without saving, as in a single run.

A worker ends with the sweep's process, however that ends (kill -9 included): it watches
its parent, and once orphaned it stops as on SIGTERM (a running job saves ``last.ckpt`` at
the end of its batch and says so on its end line; an idle worker just ends), so no
orphan goes on training the job folders that a restarted sweep runs again. Between jobs a
worker ends on SIGTERM, as a process does; only Ctrl-C, which reaches the whole process
group while the sweep stops, is still held.

A Hydra callback because ``on_job_start``/``on_job_end`` run in the process that runs the
job (a joblib worker), around the task function, after Hydra set up the job's logging, and
``on_multirun_start``/``end`` in the sweep's own process.
"""

import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path

from filelock import FileLock, Timeout
from hydra.experimental.callback import Callback
from hydra.types import RunMode
from omegaconf import DictConfig

from transformer_lab.callbacks.interrupt import hold_signals, release_signals
from transformer_lab.console import ignore
from transformer_lab.job.context import RunContext
from transformer_lab.job.threads import cores
from transformer_lab.records import DamagedRecord
from transformer_lab.runs.outcome import OutcomeRule
from transformer_lab.runs.reader import read_run
from transformer_lab.sweep.threads import gpus, job_threads, jobs_at_once, uses_gpus
from transformer_lab.sweep_process import mark_sweep_process, sweep_process

STOP_FILE = ".stopping"  # in the sweep folder, from the first Ctrl-C: start no more jobs
ORPHAN_POLL_SECONDS = 1.0  # how often a worker checks that the sweep's process lives


def runs_in_parallel(hydra: DictConfig) -> bool:
    """A multirun through joblib, from the ``hydra`` node. A single run of
    ``experiment=norm_comparison`` also composes that experiment's launcher, unused."""
    launcher = str(hydra.launcher.get("_target_", "")).lower()
    return hydra.mode == RunMode.MULTIRUN and "joblib" in launcher


def sweep_stopping(hydra: DictConfig) -> bool:
    """A parallel sweep that Ctrl-C is stopping: its remaining jobs do not run."""
    return runs_in_parallel(hydra) and (Path(hydra.sweep.dir) / STOP_FILE).exists()


class Worker:
    """What a process that runs parallel jobs keeps from one job to the next.

    A loky worker runs job after job, and Hydra hands each job a fresh unpickled copy of
    :class:`ParallelJobs`, so the callback's own attributes last one job. These must last
    the process: the GPU it claimed (CUDA reads ``CUDA_VISIBLE_DEVICES`` once per process),
    and copies of its own stdout and stderr, made before the first job's output went into
    that job's log, so that a job that never got back to the terminal (killed by a signal)
    cannot send the next job's lines into its own log. Also a logging filter for the
    console handlers (:meth:`filter`).
    """

    def __init__(self) -> None:
        self.gpu_lock: FileLock | None = None  # this process's claim on a GPU, never released
        self.terminal: tuple[int, int] | None = None  # copies of file descriptors 1 and 2
        self.in_job_log = False  # whether descriptors 1 and 2 point at a job's log
        self.parent: int | None = None  # the sweep's process, watched from the first job on

    def watch_parent(self) -> None:
        """In a sweep's worker, from its first job on, a thread that checks every second
        whether the sweep's process is still its parent, and sends this process SIGTERM
        once it is not (the parent died, and the worker was handed to another). Nothing
        in any other process."""
        if self.parent is not None:
            return
        self.parent = sweep_process()
        if self.parent is None:
            return
        threading.Thread(target=self._watch, name="sweep-parent", daemon=True).start()

    def _watch(self) -> None:
        while not self.orphaned:
            time.sleep(ORPHAN_POLL_SECONDS)
        os.kill(os.getpid(), signal.SIGTERM)

    @property
    def orphaned(self) -> bool:
        return self.parent is not None and os.getppid() != self.parent

    def claim_gpu(self, sweep_dir: Path, count: int, n_jobs: int) -> int:
        """The index of a GPU for this process, held until it ends. With ``n_jobs`` above
        ``count`` the jobs share the GPUs evenly, at most ``ceil(n_jobs / count)`` a GPU
        (a small model leaves a large GPU mostly idle); each a process of its own. A
        :class:`~filelock.FileLock` per place: the operating system's lock on every system
        (``fcntl`` exists on POSIX only)."""
        places = -(-n_jobs // count)
        for place in range(places):  # every GPU's first place before any GPU's second
            for index in range(count):
                lock = FileLock(sweep_dir / f".gpu{index}.{place}.lock")
                try:
                    lock.acquire(timeout=0)
                except Timeout:
                    continue
                self.gpu_lock = lock
                return index
        raise RuntimeError(
            f"all {places} places on each of {count} GPUs are held by other jobs; allowed: "
            f"n_jobs <= {count * places}"
        )

    def use_own_gpu(self, config: DictConfig) -> None:
        """Show CUDA only this process's GPU, claimed by its first job."""
        if self.gpu_lock is not None:
            return
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        devices = visible.split(",") if visible else [str(i) for i in range(gpus())]
        n_jobs = jobs_at_once(config.hydra.launcher.n_jobs, cores())
        index = self.claim_gpu(Path(config.hydra.sweep.dir), len(devices), n_jobs)
        os.environ["CUDA_VISIBLE_DEVICES"] = devices[index]

    def say(self, line: str) -> None:
        """One line on the terminal, timestamped like Hydra's log."""
        terminal = self.terminal[0] if self.terminal else sys.stdout.fileno()
        os.write(terminal, f"[{time.strftime('%H:%M:%S')}] {line}\n".encode())

    def into_log(self, log_file: Path) -> None:
        """Point this process's stdout and stderr at the job's log: file descriptors 1 and
        2, so that rich, Lightning's own log handler and C libraries follow."""
        if self.terminal is None:
            self.terminal = os.dup(1), os.dup(2)
        sys.stdout.flush()
        sys.stderr.flush()
        log_fd = os.open(log_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        os.close(log_fd)
        self.in_job_log = True

    def back_to_terminal(self) -> None:
        """Undo :meth:`into_log`: a worker runs further jobs, or the sweep goes on here."""
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(self.terminal[0], 1)
        os.dup2(self.terminal[1], 2)
        self.in_job_log = False

    def filter(self, record: logging.LogRecord) -> bool:
        """A logging filter for the root's console handlers: nothing while the job's output
        goes to its log, since their stream then is that log, which Hydra's file handler
        writes already (each record would be there twice)."""
        return not self.in_job_log


WORKER = Worker()  # this process's


def shown_metric(run) -> str:
    """What a finished job's end line shows: the job's ``optimized_metric`` where it
    recorded it (a translation sweep's ``val/bleu``: its sentences are rarely all right, so
    ``val/seq_acc`` reads 0.000 for every job), else ``val/seq_acc``."""
    try:
        metric = run.config.get("optimized_metric") if run.config is not None else None
    except DamagedRecord:  # the end line still says how the job ended
        metric = None
    return metric if metric in run.metrics else "val/seq_acc"


def outcome_words(run, shown: str) -> str:
    """How the job ended by its outcome rule, ``learned`` or ``stalled``, with the rule's
    value where the line shows another metric (``stalled: val/token_acc 0.408 < 0.5``: a
    translation sweep learns by its token accuracy while its sentences are rarely all
    right); empty for a job that recorded no outcome."""
    outcome = run.metrics.get("outcome")
    if outcome is None:
        return ""
    try:
        rule = OutcomeRule.of_config(run.config)
    except DamagedRecord:
        return f"  {outcome}"
    if rule.metric == shown or rule.metric not in run.metrics:
        return f"  {outcome}"
    side = ">=" if outcome == "learned" else "<"
    return f"  {outcome}: {rule.metric} {run.metrics[rule.metric]:.3f} {side} {rule.threshold:g}"


def end_line(job_dir: Path, seconds: float) -> str:
    """``done``, ``diverged``, ``failed`` or ``stopped``, what the job's files say about it
    (``stopped.json`` for a stop on a signal), and how long it took; a stopped job's line
    ends with its resume command, to copy whole."""
    took = f"({seconds:.0f} s)"
    try:
        run = read_run(job_dir)
    except DamagedRecord as error:
        return f"damaged   {job_dir.name}  {error}  {took}"
    if run.stopped:
        stop = run.stopped
        return f"stopped   {run.name}  at step {stop['step']}  {took}  resume: {stop['resume']}"
    if run.failure:
        return f"failed    {run.name}  {run.failure_reason}  {took}"
    if run.diverged:
        return f"diverged  {run.name}  at step {run.metrics['diverged_at_step']}  {took}"
    if run.finished:
        metric = shown_metric(run)
        ended = f"{metric} {run.metrics[metric]:.3f}{outcome_words(run, metric)}"
        return f"done      {run.name}  {ended}  {took}"
    return f"ended     {run.name}  without metrics.json or failed.json (see its train.log)  {took}"


class ParallelJobs(Callback):
    """Under ``hydra/launcher=joblib``: say the sweep's threads, claim a GPU, one terminal line per
    job start and end, everything else into the job's ``train.log``, Ctrl-C stopping the
    sweep with every running job saved. Other launchers: nothing."""

    def __init__(self) -> None:
        self.stop_file: Path | None = None  # set by a parallel sweep's first Ctrl-C handler
        self.active = False  # whether the job now running is a parallel one

    def __setstate__(self, state: dict) -> None:
        """Unpickled in a worker with the job it comes with, before the worker composes
        that job's config. (Python calls this only for a non-empty state: ``__init__``
        sees to that.)"""
        ignore("launcher_schema")
        self.__dict__.update(state)
        WORKER.watch_parent()  # from a worker's first job's arrival: before Hydra's set-up

    def on_multirun_start(self, config: DictConfig, **kwargs) -> None:
        if not runs_in_parallel(config.hydra):
            return
        mark_sweep_process()
        self.stop_file = Path(config.hydra.sweep.dir) / STOP_FILE
        self.stop_file.unlink(missing_ok=True)
        self.previous_handler = signal.signal(signal.SIGINT, self._stop_sweep)

    def _stop_sweep(self, signum: int, frame) -> None:
        """The first Ctrl-C: no new job; the running ones save and stop by themselves
        (the signal reached them too). The second: stop at once."""
        if self.stop_file.exists():
            signal.signal(signal.SIGINT, self.previous_handler)
            raise KeyboardInterrupt
        self.stop_file.parent.mkdir(parents=True, exist_ok=True)
        self.stop_file.touch()
        WORKER.say(
            "stopping  the running jobs save last.ckpt at their step and no new job starts "
            "(Ctrl-C again: stop at once, without saving)"
        )

    def on_multirun_end(self, config: DictConfig, **kwargs) -> None:
        if self.stop_file:
            signal.signal(signal.SIGINT, self.previous_handler)

    def on_job_start(self, config: DictConfig, **kwargs) -> None:
        self.active = runs_in_parallel(config.hydra) and not sweep_stopping(config.hydra)
        if not self.active:
            return
        hold_signals()  # a Ctrl-C before fit starts stops the job after its first step
        WORKER.watch_parent()
        if uses_gpus(config.trainer.accelerator):
            WORKER.use_own_gpu(config)
        sweep = RunContext.from_hydra().sweep_threads  # the job applies it (train.py)
        threads = job_threads(config.threads, sweep, config.hydra.launcher.n_jobs).threads
        job_dir = Path(config.hydra.runtime.output_dir)
        self.started = time.perf_counter()
        WORKER.into_log(job_dir / f"{config.hydra.job.name}.log")
        WORKER.say(f"start     {job_dir.name}  ({threads} torch thread{'s' * (threads > 1)})")
        for handler in logging.getLogger().handlers:  # Hydra made them for this job
            if not isinstance(handler, logging.FileHandler):
                handler.addFilter(WORKER)

    def on_job_end(self, config: DictConfig, **kwargs) -> None:
        if not self.active:
            return
        WORKER.back_to_terminal()
        seconds = time.perf_counter() - self.started
        WORKER.say(end_line(Path(config.hydra.runtime.output_dir), seconds))
        release_signals()  # idle, the worker ends on SIGTERM
        if WORKER.orphaned:  # its job saved and stopped: nobody takes its result
            os._exit(128 + signal.SIGTERM)
