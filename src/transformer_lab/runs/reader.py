"""The one reader of run folders, for the sweep (its summary, its terminal lines) and the
report alike.

A job folder is any folder with ``.hydra/overrides.yaml``, which Hydra writes before the
job starts, so a job that fails at once is a job too. A job is *finished* when it wrote
``metrics.json`` (a diverged job is finished: divergence is a result), *failed* when it
left ``failed.json``, and *incomplete* otherwise (still running, or killed).
"""

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from omegaconf import DictConfig, ListConfig, OmegaConf

from transformer_lab.records import (
    DamagedRecord,
    as_omegaconf,
    read_config,
    read_config_document,
    read_json,
    read_yaml,
)
from transformer_lab.runs import sweep_record
from transformer_lab.runs.hparams import override_key
from transformer_lab.runs.layout import failure_record, recorded_metrics, stop_record
from transformer_lab.runs.learning_curve import Points, read_scalars
from transformer_lab.runs.outcome import OutcomeRule, budget_of, outcome_key
from transformer_lab.runs.study_record import TRIAL_KEY

RESOLVED = "config_resolved.yaml"  # the run's config as it ran, every value resolved
GIVEN = ".hydra/config.yaml"  # as it was given: Hydra's, interpolations unresolved


def _interpolates(value: object) -> bool:
    """Whether a plain config value holds an interpolation (``${...}``) anywhere."""
    if isinstance(value, str):
        return "${" in value
    if isinstance(value, dict):
        return any(_interpolates(item) for item in value.values())
    if isinstance(value, list):
        return any(_interpolates(item) for item in value)
    return False


SHARED_CONFIGS = 256  # distinct contents kept by _shared_config
_shared: dict[str, DictConfig] = {}


def _shared_config(path: Path, document: dict) -> DictConfig:
    """``document`` (read from ``path``) as a read-only OmegaConf config, built once for
    each distinct content (its ``repr``: types and order included) and shared."""
    content = repr(document)
    config = _shared.get(content)
    if config is None:
        config = as_omegaconf(path, document)
        OmegaConf.set_readonly(config, True)
        if len(_shared) >= SHARED_CONFIGS:
            _shared.clear()
        _shared[content] = config
    return config


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
    def pruned(self) -> bool:
        """A trial the study's pruner stopped (``callbacks/trial_pruning.py``): it ended
        early, at a worse value, by design."""
        return str((self.metrics or {}).get("stop_reason", "")).startswith("pruned ")

    @property
    def diverged(self) -> bool:
        return bool(self.metrics and self.metrics.get("diverged"))

    @property
    def outcome(self) -> str | None:
        """``learned``, ``stalled`` or ``diverged`` (:mod:`.outcome`): as recorded, or by
        the run's rule for a run made before outcomes were recorded; None unfinished."""
        if self.metrics is None:
            return None
        return self.metrics.get("outcome") or OutcomeRule.of_config(
            self.settings("outcome")
        ).classify(self.metrics)

    def outcome_at(self, step: int | None) -> str | None:
        """The outcome at budget ``step`` (``outcome@<step>`` of ``metrics.json``, for a rule
        with ``at_steps``), the final one for None; None when not recorded."""
        if step is None:
            return self.outcome
        return (self.metrics or {}).get(outcome_key(step))

    def learned(self, metric: str) -> bool:
        """Whether the run learned by the budget a learned-rate ``metric`` names
        (``outcome/learned``, ``outcome/learned@400``)."""
        return self.outcome_at(budget_of(metric)) == "learned"

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
        return read_config(self.path / RESOLVED)

    @cached_property
    def config_as_given(self) -> DictConfig | None:
        """The config the job was started with, Hydra's ``.hydra/config.yaml``: written
        before the job starts, so a job that failed at once has it too."""
        return read_config(self.path / GIVEN)

    def settings(self, *keys: str, given: bool = False) -> DictConfig | None:
        """:attr:`config` (:attr:`config_as_given` where ``given``) with only its top-level
        ``keys``, each read as there; None where the run has no such config.

        For readers of a few settings across a sweep's runs. OmegaConf builds a node for
        every value, ~35 ms for a whole job's config on a 2-core CPU, while libyaml parses
        its file in ~3 ms; the jobs of a sweep mostly hold the same values at such keys
        (its hypotheses, its outcome rule), so the config of each distinct content is built
        once, read-only, and shared. Where a kept value interpolates (``${...}``, which may
        point anywhere in the config), the whole config is read instead."""
        document = self._given_document if given else self._resolved_document
        if document is None:
            return None
        kept = {key: document[key] for key in keys if key in document}
        if _interpolates(kept):
            return self.config_as_given if given else self.config
        return _shared_config(self.path / (GIVEN if given else RESOLVED), kept)

    @cached_property
    def _resolved_document(self) -> dict | None:
        """:attr:`config`'s plain values, for :meth:`settings`."""
        return read_config_document(self.path / RESOLVED)

    @cached_property
    def _given_document(self) -> dict | None:
        """:attr:`config_as_given`'s plain values, for :meth:`settings`."""
        return read_config_document(self.path / GIVEN)

    @cached_property
    def stopped(self) -> dict | None:
        """``stopped.json``: the step a signal stopped the run at and its resume command."""
        return read_json(stop_record(self.path))

    @cached_property
    def norm_comparison(self) -> dict | None:
        return read_json(self.path / "norm_comparison.json")


def overrides_of(items: list[str]) -> dict[str, str]:
    """A job's overrides by key, one spelling per key (:func:`override_key`), the value as
    typed; a deletion (``~callbacks.samples``) sets no value and is left out."""
    pairs = (item.split("=", 1) for item in items if "=" in item)
    return {override_key(key): value for key, value in pairs}


def read_run(path: Path) -> Run:
    """The run in ``path``; its overrides those of its configuration (a study's trial
    number, :data:`~.study_record.TRIAL_KEY`, left out). A record of the run that is there
    but damaged (``metrics.json``, ``failed.json``, ``.hydra/overrides.yaml``) raises
    :class:`~transformer_lab.records.DamagedRecord` naming the file, never read as absent."""
    overrides = overrides_of(_read_overrides(path / ".hydra" / "overrides.yaml"))
    overrides.pop(TRIAL_KEY, None)
    return Run(path, overrides, recorded_metrics(path), read_json(failure_record(path)))


def _read_overrides(path: Path) -> list[str]:
    """Hydra's ``overrides.yaml``: a list (``[]`` for a job without overrides)."""
    overrides = read_yaml(path)
    if not isinstance(overrides, ListConfig):
        raise DamagedRecord(path, "not a list of overrides")
    return list(overrides)


def job_folders(path: Path) -> list[Path]:
    """Every job folder of the multirun folder ``path``, in name order; other subfolders
    (the report's ``report/``, submitit's ``.submitit/``) are no jobs. A study's folder
    holds its workers' sweeps (``study-<name>/<time>/<job>``, :mod:`.study_record`), each
    with its ``sweep.json``: their jobs, each worker's in name order, the workers in the
    order they started."""
    jobs = sorted(p.parent.parent for p in path.glob("*/.hydra/overrides.yaml"))
    for worker in sorted(p.parent for p in path.glob(f"*/{sweep_record.FILE}")):
        jobs += sorted(p.parent.parent for p in worker.glob("*/.hydra/overrides.yaml"))
    return jobs


def read_jobs(path: Path) -> list[Run]:
    """Every job of the multirun folder ``path`` (:func:`job_folders`);
    :class:`~transformer_lab.records.DamagedRecord` naming the first damaged record."""
    return [read_run(job) for job in job_folders(path)]
