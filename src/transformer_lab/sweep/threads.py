"""How many jobs of a parallel sweep run at once, and how many torch threads each gets.

Jobs side by side share the machine's cores; if each kept torch's default of one intra-op
thread per core, n jobs would run n threads per core, which wait for each other
(:mod:`transformer_lab.job.threads`). So ``hydra/launcher=joblib`` runs one job per core
on a CPU (one per GPU on GPUs) and each job gives torch ``cores // n_jobs`` threads, at
least one; a job's own ``threads`` setting is not applied there.
"""

import torch
from omegaconf import OmegaConf

from transformer_lab.job.threads import cores

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


def threads_per_job(n_jobs: int, available: int) -> int:
    """``available // n_jobs``, at least 1; ``n_jobs`` < 0 counts back from all cores, as in
    joblib (-1: all of them, -2: all but one)."""
    if n_jobs == 0:
        raise ValueError("hydra.launcher.n_jobs=0; allowed: a positive number of jobs, or -1")
    running = n_jobs if n_jobs > 0 else max(1, available + 1 + n_jobs)
    return max(1, available // running)


def pin_threads(n_jobs: int) -> int:
    """Give torch this job's share of the cores; returns the thread count."""
    threads = threads_per_job(n_jobs, cores())
    torch.set_num_threads(threads)
    return threads


OmegaConf.register_new_resolver("sweep_n_jobs", sweep_n_jobs, replace=True)
