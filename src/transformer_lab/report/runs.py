"""Reading a multirun sweep: its jobs, what each varied, and what each produced.

A job folder is any subfolder with ``.hydra/overrides.yaml``, which Hydra writes before the
job starts, so a job that fails at once is a job too. A job is *finished* when it wrote
``metrics.json`` (a diverged job is finished: divergence is a result), *failed* when it
left ``failed.json``, and *incomplete* otherwise (still running, or killed). The sweep
summary at the end of every multirun and the report both read a sweep here.

Runs are grouped into configurations by the overrides that vary across the sweep, except
the replicate key (``seed``): runs of one configuration differ only by their seed.
"""

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from transformer_lab.console import natural_key
from transformer_lab.hparams import override_key
from transformer_lab.learning_curve import Points, read_scalars

NOT_SET = "(default)"  # the value of a key that a job did not override


class NotASweep(ValueError):
    """The folder holds no job of a Hydra multirun (or none that finished): no report."""


@dataclass
class Run:
    path: Path
    overrides: dict[str, str]  # {"model.norm": "pre", "seed": "0", ...}
    metrics: dict | None = None  # metrics.json; None until the job finished
    failure: dict | None = None  # failed.json

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def finished(self) -> bool:
        return self.metrics is not None

    @property
    def diverged(self) -> bool:
        return bool(self.metrics and self.metrics.get("diverged"))

    @property
    def failure_reason(self) -> str | None:
        """``error: message`` of ``failed.json``, as the summary, the report and the
        terminal line of a parallel job give it; None unless the job failed."""
        if self.failure is None:
            return None
        return f"{self.failure.get('error')}: {self.failure.get('message')}"

    @cached_property
    def scalars(self) -> dict[str, Points]:
        """Every TensorBoard scalar tag as ``[(step, value), ...]``, in step order."""
        return read_scalars(self.path)

    @cached_property
    def config(self) -> DictConfig | None:
        """The run's resolved configuration (``config_resolved.yaml``)."""
        path = self.path / "config_resolved.yaml"
        return OmegaConf.load(path) if path.is_file() else None

    @cached_property
    def norm_comparison(self) -> dict | None:
        return _read_json(self.path / "norm_comparison.json")


def _read_json(path: Path) -> dict | None:
    return json.loads(path.read_text()) if path.is_file() else None


def read_run(path: Path) -> Run:
    items = OmegaConf.load(path / ".hydra" / "overrides.yaml") or []
    pairs = (item.split("=", 1) for item in items if "=" in item)
    overrides = {override_key(key): value for key, value in pairs}
    return Run(path, overrides, _read_json(path / "metrics.json"), _read_json(path / "failed.json"))


def read_jobs(path: Path) -> list[Run]:
    """Every job of the multirun folder ``path``, in name order; other subfolders (the
    report's ``report/``, submitit's ``.submitit/``) are no jobs."""
    jobs = sorted(p.parent.parent for p in path.glob("*/.hydra/overrides.yaml"))
    return [read_run(job) for job in jobs]


def group_runs(runs: list[Run], keys: list[str]) -> dict[tuple[str, ...], list[Run]]:
    """``runs`` by their values of the override ``keys``, groups in natural order."""
    groups: dict[tuple[str, ...], list[Run]] = {}
    for run in runs:
        groups.setdefault(tuple(run.overrides.get(k, NOT_SET) for k in keys), []).append(run)
    return dict(sorted(groups.items(), key=lambda kv: [natural_key(v) for v in kv[0]]))


@dataclass
class Sweep:
    path: Path
    runs: list[Run]  # every job, finished or not
    replicate_key: str = "seed"
    varying: list[str] = field(init=False)  # the override keys that differ between jobs

    def __post_init__(self):
        keys = sorted({key for run in self.runs for key in run.overrides})
        self.varying = [k for k in keys if len({r.overrides.get(k) for r in self.runs}) > 1]

    @property
    def config_keys(self) -> list[str]:
        """The overrides that make a configuration: all varying ones but the replicate key."""
        return [k for k in self.varying if k != self.replicate_key]

    @property
    def finished(self) -> list[Run]:
        return [r for r in self.runs if r.finished]

    @property
    def unfinished(self) -> list[Run]:
        return [r for r in self.runs if not r.finished]

    def configurations(self) -> dict[tuple[str, ...], list[Run]]:
        """Finished runs by configuration, configurations in natural order of their values."""
        return group_runs(self.finished, self.config_keys)

    def architectures(self) -> dict[str, list[dict]]:
        """The finished runs' ``norm_comparison.json`` records by the model they measured.

        Twins differ from the run only in ``norm``, so records of runs that differ only in
        norm or seed describe one architecture, and runs that share the seed too measured
        the very same twins: those count once. Each architecture is named by the model
        arguments in which the sweep's architectures differ (``"num_encoder_layers=6"``).
        """
        distinct = {}
        for run in self.finished:
            if run.norm_comparison:
                twins = {k: v for k, v in run.norm_comparison["model"].items() if k != "norm"}
                distinct.setdefault(str(sorted(twins.items())), run.norm_comparison)
        records = list(distinct.values())

        def architecture(record: dict) -> dict:
            return {k: v for k, v in record["model"].items() if k not in ("norm", "init_seed")}

        keys = sorted({k for record in records for k in architecture(record)})
        differing = [k for k in keys
                     if len({str(architecture(r).get(k)) for r in records}) > 1]  # fmt: skip
        groups: dict[str, list[dict]] = {}
        for record in records:
            name = ", ".join(f"{k}={architecture(record).get(k)}" for k in differing)
            groups.setdefault(name or "the sweep's one architecture", []).append(record)
        return groups


def load_sweep(path: Path, replicate_key: str = "seed") -> Sweep:
    """The sweep in ``path``, or :class:`NotASweep` saying what the folder is instead."""
    if not path.is_dir():
        raise NotASweep(f"{path} is not a folder")
    if (path / ".hydra").is_dir():
        raise NotASweep(
            f"{path} is a single run, not a sweep; pass a multirun folder "
            "(outputs/multirun/<time>/) whose subfolders are the jobs"
        )
    runs = read_jobs(path)
    if not runs:
        raise NotASweep(
            f"{path} holds no job folders (subfolders with .hydra/overrides.yaml); "
            "pass a multirun folder, e.g. outputs/multirun/<time>/"
        )
    return Sweep(path, runs, replicate_key)
