"""A multirun sweep as the report sees it: its jobs (read by :mod:`transformer_lab.runs.reader`),
what varies between them, and its configurations.

Runs are grouped into configurations by the overrides that vary across the sweep, except
the replicate key (``seed``): runs of one configuration differ only by their seed. The
jobs the report cannot trust (a damaged record, no config, other code, a metric that is no
number: :mod:`.inputs`) are left out as the folder is read, each named in ``left_out``.
"""

from dataclasses import dataclass, field
from pathlib import Path

from transformer_lab.report.inputs import (
    CONFIG,
    LeftOut,
    damaged_record,
    other_code,
    read_environment,
    without_bad_numbers,
)
from transformer_lab.runs.order import natural_key
from transformer_lab.runs.reader import Run, job_folders, read_run
from transformer_lab.sweep.hypotheses import varying_keys

NOT_SET = "(default)"  # the value of a key that a job did not override


class NotASweep(ValueError):
    """The folder holds no job of a Hydra multirun (or none that finished): no report."""


def group_runs(runs: list[Run], keys: list[str]) -> dict[tuple[str, ...], list[Run]]:
    """``runs`` by their values of the override ``keys``, groups in natural order."""
    groups: dict[tuple[str, ...], list[Run]] = {}
    for run in runs:
        groups.setdefault(tuple(run.overrides.get(k, NOT_SET) for k in keys), []).append(run)
    return dict(sorted(groups.items(), key=lambda kv: [natural_key(v) for v in kv[0]]))


@dataclass
class Sweep:
    path: Path
    runs: list[Run]  # every job, finished or not, but the pruned trials of a study
    replicate_key: str = "seed"
    pruned: list[Run] = field(default_factory=list)  # stopped early by the study's pruner
    left_out: list[LeftOut] = field(default_factory=list)  # jobs and metrics not trusted
    environments: dict[str, dict] = field(default_factory=dict)  # environment.json by job
    varying: list[str] = field(init=False)  # the override keys that differ between jobs

    def __post_init__(self):
        self.varying = varying_keys([run.overrides for run in self.runs])

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

        Twins differ from the run only in the norm placement (a record leaves per-stack
        placements to ``norm``), so records of runs that differ only in placement or seed
        describe one architecture, and runs that share the seed too measured
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
        differing = [k for k in keys if len({str(architecture(r).get(k)) for r in records}) > 1]
        groups: dict[str, list[dict]] = {}
        for record in records:
            name = ", ".join(f"{k}={architecture(record).get(k)}" for k in differing)
            groups.setdefault(name or "the sweep's one architecture", []).append(record)
        return groups


def _trusted_jobs(path: Path) -> tuple[list[Run], list[LeftOut], dict[str, dict]]:
    """The jobs of ``path`` whose records parse and that have their config, those left
    out, and the environments of the jobs that have one."""
    runs, left_out, environments = [], [], {}
    for folder in job_folders(path):
        damaged = damaged_record(folder)
        if damaged:
            left_out.append(LeftOut(folder.name, damaged))
            continue
        run = read_run(folder)
        environment = read_environment(run)
        if environment is not None:
            environments[run.name] = environment
        if not (folder / CONFIG).is_file():
            why = f"no {CONFIG}: the config it ran with, and the hypotheses it tests, unknown"
            left_out.append(LeftOut(run.name, why))
            continue
        if run.finished:
            run, not_numbers = without_bad_numbers(run)
            left_out += not_numbers
        runs.append(run)
    return runs, left_out, environments


def load_sweep(path: Path, replicate_key: str = "seed", allow_mixed_code: bool = False) -> Sweep:
    """The sweep in ``path``, or :class:`NotASweep` saying what the folder is instead;
    jobs the report cannot trust left out and named (:mod:`.inputs`), those of other code
    than the sweep's too unless ``allow_mixed_code``."""
    if not path.is_dir():
        raise NotASweep(f"{path} is not a folder")
    if (path / ".hydra").is_dir():
        raise NotASweep(
            f"{path} is a single run, not a sweep; pass a multirun folder "
            "(outputs/multirun/<time>/) whose subfolders are the jobs"
        )
    if not job_folders(path):
        raise NotASweep(
            f"{path} holds no job folders (subfolders with .hydra/overrides.yaml); "
            "pass a multirun folder, e.g. outputs/multirun/<time>/"
        )
    runs, left_out, environments = _trusted_jobs(path)
    if not allow_mixed_code:
        others = other_code(runs, environments)
        left_out += [LeftOut(name, why) for name, why in others.items()]
        runs = [run for run in runs if run.name not in others]
    kept = [run for run in runs if not run.pruned]  # their metrics are of a shorter run
    pruned = [run for run in runs if run.pruned]
    return Sweep(path, kept, replicate_key, pruned, left_out, environments)
