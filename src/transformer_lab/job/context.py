"""What one job knows of where it runs: read from Hydra once, then passed down.

A job's steps (check, resume, build, record) need the same few facts: the folder it writes
to, the folder Hydra made for this start, whether it runs in a sweep, the overrides it was
given and the command that was typed. They are read here, once per job, and handed to each
step, instead of each step asking Hydra's global config (or a step changing the config so
that a later one finds its folder).
"""

from dataclasses import dataclass, replace
from pathlib import Path

from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from transformer_lab.runs.command import started_as


@dataclass(frozen=True)
class RunContext:
    """``output_dir`` is where the job writes: the folder Hydra made for this start
    (``started_in``), or the run a resume goes on in (:meth:`resumed_in`). ``hydra`` is
    Hydra's node of the job's config (mode, launcher, sweeper, overrides, job name);
    ``orig_argv``/``argv`` the command as typed, also inside a parallel sweep's worker
    (:func:`~transformer_lab.runs.command.started_as`)."""

    output_dir: Path
    started_in: Path
    hydra: DictConfig
    orig_argv: tuple[str, ...]
    argv: tuple[str, ...]

    @classmethod
    def from_hydra(cls) -> "RunContext":
        """The context of the job Hydra is running in this process."""
        hydra = HydraConfig.get()
        folder = Path(hydra.runtime.output_dir)
        orig_argv, argv = started_as()
        return cls(folder, folder, hydra, tuple(orig_argv), tuple(argv))

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
