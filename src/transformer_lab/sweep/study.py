"""``hparams_search=optuna``: one study that any number of workers share, and that the same
command continues.

The study lives in a storage of its own, independent of any sweep folder: a path (SQLite,
by default ``outputs/multirun/study-<hydra.sweeper.study_name>/optuna.db``) or a database
URL (``hydra.sweeper.storage.url``). Each worker is a sweep with a folder of its own inside
the study's folder (``study-<name>/<time>/``) and records there which study its trials
belong to (:mod:`transformer_lab.runs.study_record`), for the report. Workers started
together, on one machine or as SLURM jobs, draw different trials
(:mod:`.trial_sampler`), run ``n_trials`` in the whole study between them
(:mod:`.shared_study`), and fail a dead worker's trials by its missed heartbeats, never at
another one's start. A study is continued only by the command that started it (its
overrides, :data:`STUDY_COMMAND`): another architecture's study needs a name of its own.
"""

import logging
from pathlib import Path

import optuna
from filelock import FileLock
from hydra.experimental.callback import Callback
from omegaconf import DictConfig
from optuna.storages import RDBStorage

from transformer_lab.config.validation import ConfigError
from transformer_lab.console import quiet_optuna
from transformer_lab.job.checks import refuse
from transformer_lab.runs.study_record import StudyRecord, find

log = logging.getLogger(__name__)

STUDY_COMMAND = "command"  # the study's user attribute: the overrides that started it
# overrides that change where or how long trials run, not what the study tunes
NOT_THE_STUDY = ("paths.", "ckpt_path=", "pruning.")
DONE = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)
SQLITE_TIMEOUT = 60  # seconds a worker waits for another's write before "database is locked"


def storage_url(url: str | Path) -> str:
    """``url`` as SQLAlchemy's URL: a database URL as it is, a path as SQLite's file (its
    folder made: SQLite makes the file only)."""
    if "://" in str(url):
        return str(url)
    path = Path(url).resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}"


def study_storage(
    url: str | Path, heartbeat_interval: int | None = None, grace_period: int | None = None
) -> RDBStorage:
    """The study's storage at ``url`` (:func:`storage_url`). With ``heartbeat_interval``,
    each worker records a heartbeat of its running trials that often (seconds), and a trial
    whose last one is ``grace_period`` old is failed as its worker's (:mod:`.shared_study`).

    Its engine commits every statement (``AUTOCOMMIT``): Optuna 2.10, which the Hydra
    plugin pins, stamps a new database's schema version on a connection it never commits,
    which SQLAlchemy 2 (no autocommit of its own) rolls back, so the next start finds no
    version and fails. Optuna numbers a new trial by counting the rows before its own, so
    workers writing at once still number their trials apart. SQLite lets one writer in at a
    time; the others wait up to :data:`SQLITE_TIMEOUT` seconds. Workers that start together
    on a new SQLite file would each make its tables (one fails on the schema's version), so
    they open it one at a time, under a file lock beside it."""
    quiet_optuna()  # every use of a study opens its storage here first
    url = storage_url(url)
    engine_kwargs: dict = {"isolation_level": "AUTOCOMMIT"}
    settings = {"heartbeat_interval": heartbeat_interval, "grace_period": grace_period}
    if not url.startswith("sqlite:///"):
        return RDBStorage(url, engine_kwargs=engine_kwargs, **settings)
    engine_kwargs["connect_args"] = {"timeout": SQLITE_TIMEOUT}
    with FileLock(url.removeprefix("sqlite:///") + ".lock"):
        return RDBStorage(url, engine_kwargs=engine_kwargs, **settings)


def load_study(folder: Path) -> optuna.Study | None:
    """The study that the worker sweep ``folder``, or the workers in the study folder
    ``folder``, recorded; None where there is none."""
    record = find(folder)
    if record is None:
        return None
    return optuna.load_study(study_name=record.name, storage=study_storage(record.storage))


def study_command(config: DictConfig) -> list[str]:
    """The overrides that say what the study tunes: those typed, but for the output paths."""
    return sorted(o for o in config.hydra.overrides.task if not o.startswith(NOT_THE_STUDY))


def _check_same_study(study: optuna.Study, command: list[str], name: str) -> None:
    started = study.user_attrs.get(STUDY_COMMAND, command)
    if started != command:
        raise ConfigError(
            f"hydra.sweeper.study_name={name}: the study in this storage was started by other "
            f"overrides ({' '.join(started) or 'none'}) than these ({' '.join(command)}); "
            "allowed: the same overrides to continue it, or a new hydra.sweeper.study_name"
        )


def check_may_join(config: DictConfig) -> None:
    """A ConfigError if the study the multirun ``config``'s sweeper names exists and another
    command started it; nothing is made where none exists. The check before any folder
    (:class:`~transformer_lab.sweep.checks.ConfigCheck`) asks, so that a refused command
    leaves no worker folder."""
    sweeper = config.hydra.sweeper
    url = str(sweeper.storage.url)
    if "://" not in url and not Path(url).resolve().is_file():  # a new SQLite study
        return
    try:
        study = optuna.load_study(study_name=sweeper.study_name, storage=study_storage(url))
    except KeyError:  # no study of that name in this storage yet
        return
    _check_same_study(study, study_command(config), sweeper.study_name)


def joined_study(config: DictConfig) -> optuna.Study:
    """The study the multirun ``config``'s sweeper names, made if new; a ConfigError if
    another command started it (:func:`check_may_join` has asked already, but a worker
    may have started it since)."""
    sweeper = config.hydra.sweeper
    study = optuna.create_study(
        study_name=sweeper.study_name,
        storage=study_storage(storage_url(sweeper.storage.url)),
        direction=getattr(sweeper.direction, "name", sweeper.direction),
        load_if_exists=True,
    )
    _check_same_study(study, study_command(config), sweeper.study_name)
    return study


class ContinuedStudy(Callback):
    """Before the sweeper starts: join the study (made if new, recording the command that
    started it) or refuse a command other than the one that started it, and record the
    study in the worker's sweep folder."""

    def on_multirun_start(self, config: DictConfig, **kwargs) -> None:
        sweeper, sweep_dir = config.hydra.sweeper, Path(config.hydra.sweep.dir)
        url = storage_url(sweeper.storage.url)
        command = study_command(config)
        try:
            study = joined_study(config)
        except ConfigError as error:
            refuse(error)
        study.set_user_attr(STUDY_COMMAND, command)
        StudyRecord(url, sweeper.study_name).write(sweep_dir)
        trials = study.get_trials(deepcopy=False)
        if trials:
            done = sum(trial.state in DONE for trial in trials)
            log.info(
                "study %s continues in %s: %d of %d trials done",
                sweeper.study_name,
                url,
                done,
                sweeper.n_trials,
            )
