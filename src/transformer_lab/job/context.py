"""What one job knows of where it runs: read from Hydra once, then passed down.

A job's steps (check, resume, build, record) need the same few facts: the folder it writes
to, the folder Hydra made for this start, whether it runs in a sweep, the overrides it was
given, the command that was typed and the keys its sweep varies. They are read here, once
per job, and handed to each step, instead of each step asking Hydra's global config (or a
step changing the config so that a later one finds its folder).
"""

import sys
from dataclasses import dataclass, replace
from pathlib import Path

from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from transformer_lab.job.threads import ThreadChoice
from transformer_lab.runs.sweep_record import SweepRecord


@dataclass(frozen=True)
class RunContext:
    """``output_dir`` is where the job writes: the folder Hydra made for this start
    (``started_in``), or the run a resume goes on in (:meth:`resumed_in`). ``hydra`` is
    Hydra's node of the job's config (mode, launcher, sweeper, overrides, job name);
    ``orig_argv``/``argv`` the command as typed (``sys.orig_argv``/``sys.argv``), also in
    a job that a launcher runs in a process of its own; ``swept`` the keys the job's sweep
    varies, None for a single run, and ``sweep_threads`` the torch threads the sweep decided
    for every job (all from the sweep's
    :class:`~transformer_lab.runs.sweep_record.SweepRecord`); ``threads`` this job's, once
    applied (:func:`transformer_lab.sweep.threads.job_threads`)."""

    output_dir: Path
    started_in: Path
    hydra: DictConfig
    orig_argv: tuple[str, ...]
    argv: tuple[str, ...]
    swept: frozenset[str] | None = None
    sweep_threads: ThreadChoice | None = None
    threads: ThreadChoice | None = None

    @classmethod
    def from_hydra(cls) -> "RunContext":
        """The context of the job Hydra is running in this process: in a multirun, with
        the command and the swept keys that the sweep's process recorded; without that
        record, this process's command and no swept keys known."""
        hydra = HydraConfig.get()
        folder = Path(hydra.runtime.output_dir)
        multirun = hydra.mode == RunMode.MULTIRUN
        sweep = SweepRecord.read(Path(hydra.sweep.dir)) if multirun else None
        if sweep is None:
            return cls(folder, folder, hydra, tuple(sys.orig_argv), tuple(sys.argv))
        threads = None
        if sweep.torch_threads is not None:
            threads = ThreadChoice(sweep.torch_threads, sweep.threads_decided_by or "")
        return cls(folder, folder, hydra, sweep.orig_argv, sweep.argv, sweep.swept, threads)

    def with_threads(self, threads: ThreadChoice) -> "RunContext":
        """The same job, with the torch threads it runs with."""
        return replace(self, threads=threads)

    @property
    def in_sweep(self) -> bool:
        return self.hydra.mode == RunMode.MULTIRUN

    @property
    def overrides(self) -> list[str]:
        """The job's own overrides (in a sweep: this job's values)."""
        return list(self.hydra.overrides.task)

    def resumed_in(self, run: Path) -> "RunContext":
        """The same job writing into ``run``, the folder of the run it resumes."""
        return replace(self, output_dir=run)

    def job_config(self, cfg: DictConfig) -> DictConfig:
        """A copy of ``cfg`` whose ``paths.output_dir`` is this job's folder: what the
        checkpoint callbacks, loggers and trainer are built from (``conf/`` points them at
        ``${paths.output_dir}``)."""
        config = cfg.copy()
        OmegaConf.update(config, "paths.output_dir", str(self.output_dir))
        return config
