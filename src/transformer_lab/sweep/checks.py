"""The sweep's side of the configuration check: a Hydra callback that checks the config of a
run, or of every job of a sweep, before Hydra makes any folder.

Hydra calls ``on_run_start`` before ``run_job`` makes the run folder, and
``on_multirun_start`` before the sweeper makes the sweep folder, so a bad value leaves
nothing behind (:func:`transformer_lab.job.checks.check_config` says what is checked). An
optimizing sweeper's search space is checked too: no job's config shows it. So are the
experiment's hypotheses (:mod:`transformer_lab.sweep.hypotheses`): their format in a run,
and in a sweep that they compare what its jobs run; and the launcher, which must be the one
each job's config composes (:mod:`.launchers`). And the folders: a run writes only into a new
or empty folder or one of an earlier start of its own config, a sweep only into a sweep's
folder (:mod:`transformer_lab.job.ownership`).
"""

import logging
import sys
from collections import Counter
from pathlib import Path

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from transformer_lab.config.command_line import end_composition
from transformer_lab.config.jobs import job_configs, job_overrides, split_config
from transformer_lab.config.validation import ConfigError, InvalidSetting
from transformer_lab.job.cancelling_settings import cancelling_settings
from transformer_lab.job.checks import ModelBuilds, check_config, check_run, refuse
from transformer_lab.job.ownership import check_folder
from transformer_lab.runs.reader import overrides_of
from transformer_lab.sweep.design import out_of_reach
from transformer_lab.sweep.hypotheses import (
    check_outcome,
    check_sweep_start,
    merged,
    parse_hypotheses,
    reported_by,
)
from transformer_lab.sweep.launchers import check_launcher_applies
from transformer_lab.sweep.naming import check_distinct_folders, folder_name
from transformer_lab.sweep.record import sweep_record
from transformer_lab.sweep.search_space import check_warmup_range
from transformer_lab.sweep.sequential import (
    LEVEL,
    SequentialDesign,
    check_sequential,
    is_sequential,
)

log = logging.getLogger(__name__)


def check_joins_study(config: DictConfig) -> None:
    """A shared Optuna study (``hparams_search=optuna``) that another command started is
    refused here, before the worker's folder (its ``sweep.json``) is made. Optuna is
    imported for a study only: a plain run never needs the ``[tune]`` extra."""
    from transformer_lab.sweep.study import check_may_join

    check_may_join(config)


def warn(lines: Counter, jobs: int) -> None:
    """Each of the settings that cancel each other (:mod:`~transformer_lab.job.
    cancelling_settings`) in one line on stderr, once, with how many of a sweep's ``jobs``
    it concerns."""
    for line, count in lines.items():
        where = f" ({count} of {jobs} jobs)" if jobs > 1 else ""
        print(f"warning: {line}{where}", file=sys.stderr, flush=True)


class ConfigCheck(Callback):
    """Checks the config of a run, or of every job of a sweep, before any folder exists.

    Hydra turns a callback's exception into a warning and goes on, so this one exits.
    """

    def on_run_start(self, config: DictConfig, **kwargs) -> None:
        end_composition()  # Hydra composed the run: its errors are its own again
        task, hydra_cfg = split_config(config)
        try:
            check_folder(Path(hydra_cfg.run.dir), task, "hydra.run.dir")
            check_run(task, hydra_cfg)  # the job takes its result: checked once
            check_outcome(config)
            parse_hypotheses(config.get("hypotheses"))
        except ConfigError as error:
            refuse(error)
        warn(Counter(cancelling_settings(task)), jobs=1)

    def on_multirun_start(self, config: DictConfig, **kwargs) -> None:
        if is_sequential(config.hydra):
            try:
                check_sequential(config, bool(config.get("hypotheses")))
            except ConfigError as error:
                refuse(error)
        try:
            check_sweep_folder(Path(config.hydra.sweep.dir))
            jobs = job_overrides(config)  # None: an optimizing sweeper draws them as it goes
            excluded = list(config.hydra.job.config.override_dirname.exclude_keys)
            swept = sweep_record(config).swept
            if jobs is not None:
                check_distinct_folders(jobs, excluded, swept)
        except ConfigError as error:
            refuse(error)
        stated, reported, models, warnings = [], set(), ModelBuilds(), Counter()
        for index, (job, job_config, hydra_cfg) in enumerate(job_configs(config)):
            try:
                if jobs is not None:  # a sweep run again goes on in its jobs' own folders
                    name = folder_name(jobs[index], excluded, swept)
                    check_folder(Path(config.hydra.sweep.dir) / name, job_config, "hydra.sweep.dir")
                check_launcher_applies(config.hydra, hydra_cfg)
                check_config(job_config, hydra_cfg, models)
                check_outcome(job_config)
            except ConfigError as error:
                refuse(error, job)
            warnings.update(cancelling_settings(job_config))
            items = job_config.get("hypotheses")  # resolved now: the next job reuses the config
            stated.append(
                OmegaConf.to_container(items, resolve=True) if OmegaConf.is_config(items) else items
            )
            reported |= reported_by(job_config)
        try:
            if config.hydra.sweeper.get("direction") is not None:  # an optimizing sweeper
                check_warmup_range(config)  # the search space, which no job config shows
            if "continued_study" in (config.hydra.get("callbacks") or {}):
                check_joins_study(config)
            hypotheses = [h for items in stated for h in parse_hypotheses(items)]
            check_sweep_start(
                hypotheses, reported, None if jobs is None else [overrides_of(j) for j in jobs]
            )
        except ConfigError as error:
            refuse(error)
        warn(warnings, jobs=len(stated))
        if jobs is not None and hypotheses:
            for line in reach(config, merged(hypotheses), [overrides_of(j) for j in jobs]):
                log.warning(line)


def reach(config: DictConfig, hypotheses: list, jobs: list[dict[str, str]]) -> list[str]:
    """The rules the sweep's design cannot decide (:func:`.design.out_of_reach`): a
    sequential sweep at its last look, with its budget of seeds."""
    if not is_sequential(config.hydra):
        return out_of_reach(hypotheses, jobs, LEVEL)
    design = SequentialDesign.of_sweeper(config.hydra.sweeper)
    seed_key = config.hydra.sweeper.seed_key
    looks = len(design.stages)
    return out_of_reach(hypotheses, jobs, design.level, looks, seed_key, design.budget)


# what every sweep's folder holds from its start: Hydra's record of the sweep, the lab's
SWEEP_RECORDS = ("multirun.yaml", "sweep.json")


def check_sweep_folder(folder: Path) -> None:
    """A sweep writes into a new or empty folder, or a sweep's folder (run again, it goes
    on); InvalidSetting ``hydra.sweep.dir`` for any other (``/``, ``/etc``)."""
    if not folder.exists() or (folder.is_dir() and not any(folder.iterdir())):
        return
    if not any((folder / name).is_file() for name in SWEEP_RECORDS):
        raise InvalidSetting(
            "hydra.sweep.dir",
            str(folder),
            "it holds files that are not a sweep of the lab (no multirun.yaml or sweep.json)",
            "a new or empty folder, or a sweep's folder (to go on with it)",
        )
