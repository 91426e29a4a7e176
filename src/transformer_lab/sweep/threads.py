"""How many jobs of a parallel sweep run at once, and how many torch threads every job of a
sweep gets: one count, decided at the sweep's start.

Jobs side by side share the machine's cores; if each kept torch's default of one intra-op
thread per core, n jobs would run n threads per core, which wait for each other
(:mod:`transformer_lab.job.threads`). So ``hydra/launcher=joblib`` runs one job per core
on a CPU (one per GPU on GPUs) and each job gives torch ``cores // n_jobs`` threads, at
least one; a job's own ``threads`` setting is not applied there.

A seed's trajectory depends on the thread count, so the jobs of one sweep, which its report
compares, must compute with one count. ``threads: auto`` measured by each job as it starts
gave one sweep's jobs 1 or 2 threads as other work came and went. So the sweep's process
decides the count once, when the sweep starts (:func:`sweep_threads`), records it in
``sweep.json`` (:class:`~transformer_lab.sweep.record.RecordSweep`; a continued sweep keeps
the first start's), and every job takes it (:func:`job_threads`): the joblib launcher's
share; else ``OMP_NUM_THREADS`` where set; on a submitit launcher (SLURM) the
``cpus_per_task`` each job is given (1 where unset, SLURM's default); else the sweep's
``threads``, ``auto`` measured once at the start. A job that pins a number of its own
(``-m threads=1,2``) runs that number, outside a parallel sweep.
"""

import os

import torch
from omegaconf import DictConfig, OmegaConf

from transformer_lab.job.threads import AUTO, ThreadChoice, choose_threads, cores

GPU_ACCELERATORS = ("gpu", "cuda")


def uses_gpus(accelerator: str) -> bool:
    """Whether a trainer with this ``accelerator`` runs on GPUs (``auto`` picks them if any)."""
    return accelerator in GPU_ACCELERATORS or (accelerator == "auto" and gpus() > 0)


def gpus() -> int:
    """The CUDA devices visible here. torch counts them through NVML where it can, which
    leaves CUDA uninitialised: a job may still choose its device by ``CUDA_VISIBLE_DEVICES``."""
    return torch.cuda.device_count()


def sweep_n_jobs(accelerator: str) -> int:
    """The default ``hydra.launcher.n_jobs``: one job per GPU on GPUs, else one per core."""
    return max(1, gpus()) if uses_gpus(accelerator) else cores()


def jobs_at_once(n_jobs: int, available: int) -> int:
    """The jobs a joblib launcher of ``n_jobs`` runs side by side on ``available`` cores:
    ``n_jobs`` < 0 counts back from all cores, as in joblib (-1: all of them, -2: all but
    one)."""
    if n_jobs == 0:
        raise ValueError("hydra.launcher.n_jobs=0; allowed: a positive number of jobs, or -1")
    return n_jobs if n_jobs > 0 else max(1, available + 1 + n_jobs)


def threads_per_job(n_jobs: int, available: int) -> int:
    """``available`` shared by :func:`jobs_at_once`, at least 1 thread a job."""
    return max(1, available // jobs_at_once(n_jobs, available))


def parallel_share(n_jobs: int) -> ThreadChoice:
    """Each of ``n_jobs`` jobs side by side: its share of this process's cores."""
    available = cores()
    threads = threads_per_job(n_jobs, available)
    return ThreadChoice(threads, f"hydra/launcher=joblib: {available} cores, n_jobs={n_jobs}")


def sweep_threads(config: DictConfig, parallel: bool) -> ThreadChoice:
    """The torch threads of every job of the multirun ``config`` (with its ``hydra``
    node), decided in the sweep's process at its start; ``parallel``: whether its jobs run
    side by side (the joblib launcher)."""
    launcher = config.hydra.launcher
    if parallel:
        return parallel_share(launcher.n_jobs)
    if "OMP_NUM_THREADS" in os.environ:
        return choose_threads(AUTO)
    setting = config.get("threads", AUTO)
    if setting == AUTO and "submitit" in str(launcher.get("_target_", "")):
        given = launcher.get("cpus_per_task")
        return ThreadChoice(given or 1, f"hydra.launcher.cpus_per_task={given}")
    chosen = choose_threads(setting)
    return ThreadChoice(chosen.threads, f"{chosen.why}, at the sweep's start")


def job_threads(setting: int | str, sweep: ThreadChoice | None, n_jobs: int | None) -> ThreadChoice:
    """A job's torch threads: the count its sweep decided (``sweep``, from ``sweep.json``),
    unless the job pins a number of its own outside a parallel sweep; a single run's own
    (``sweep`` None). ``n_jobs``: the parallel sweep's jobs side by side (None: not one),
    whose share stands in for a sweep that recorded no count."""
    if sweep is not None and (n_jobs is not None or setting == AUTO):
        return ThreadChoice(sweep.threads, f"the sweep's: {sweep.why}")
    if n_jobs is not None:
        return parallel_share(n_jobs)
    return choose_threads(setting)


OmegaConf.register_new_resolver("sweep_n_jobs", sweep_n_jobs, replace=True)
