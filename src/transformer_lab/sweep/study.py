"""``hparams_search=optuna``: a study kept in its sweep folder, which the same command
continues.

The study lives in ``<sweep>/optuna.db`` (SQLite through Optuna's own storage,
:func:`study_storage`), the sweep folder
named after the study (``outputs/multirun/study-<hydra.sweeper.study_name>``,
``conf/hparams_search/optuna.yaml``), so a rerun finds it. The plugin always loads an
existing study of that name (``load_if_exists``) but runs ``n_trials`` *more* trials each
time; here ``hydra.sweeper.n_trials`` is the size of the whole study: the
:class:`ContinuedStudy` callback, before Hydra builds the sweeper, lowers it to the
trials still to go, marks the trials a killed sweep left running as failed, and moves the
sampler's seed on by the trials done, so that a continued study does not draw its first
trials' random parameters again. A study is continued only by the command that started
it (its overrides, :data:`STUDY_COMMAND`): another architecture's study needs a name of
its own.
"""

import logging
from pathlib import Path

import optuna
from hydra.experimental.callback import Callback
from omegaconf import DictConfig, read_write
from optuna.storages import RDBStorage

from transformer_lab.config.validation import ConfigError
from transformer_lab.job.checks import refuse

log = logging.getLogger(__name__)

STUDY_FILE = "optuna.db"
STUDY_COMMAND = "command"  # the study's user attribute: the overrides that started it
NOT_THE_STUDY = ("paths.", "ckpt_path=")  # overrides that change where, not what, it tunes
DONE = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)


def study_storage(sweep_dir: str | Path) -> RDBStorage:
    """``<sweep_dir>/optuna.db``, the folder made if need be (SQLite makes the file only).

    Its engine commits every statement (``AUTOCOMMIT``): Optuna 2.10, which the Hydra
    plugin pins, stamps a new database's schema version on a connection it never commits,
    which SQLAlchemy 2 (no autocommit of its own) rolls back, so the next start finds no
    version and fails. One process writes the study (the sweep's), so no transaction is
    lost that a second writer could have needed."""
    sweep_dir = Path(sweep_dir)
    sweep_dir.mkdir(parents=True, exist_ok=True)
    url = f"sqlite:///{sweep_dir / STUDY_FILE}"
    return RDBStorage(url, engine_kwargs={"isolation_level": "AUTOCOMMIT"})


def load_study(sweep_dir: Path) -> optuna.Study | None:
    """The study kept in ``sweep_dir`` (its only one), or None where there is none."""
    if not (sweep_dir / STUDY_FILE).is_file():
        return None
    storage = study_storage(sweep_dir)
    summaries = optuna.get_all_study_summaries(storage)
    if len(summaries) != 1:
        return None
    return optuna.load_study(study_name=summaries[0].study_name, storage=storage)


def study_command(config: DictConfig) -> list[str]:
    """The overrides that say what the study tunes: those typed, but for the output paths."""
    return sorted(o for o in config.hydra.overrides.task if not o.startswith(NOT_THE_STUDY))


def _check_same_study(study: optuna.Study, command: list[str], name: str) -> None:
    started = study.user_attrs.get(STUDY_COMMAND, command)
    if started != command:
        raise ConfigError(
            f"hydra.sweeper.study_name={name}: the study in this folder was started by other "
            f"overrides ({' '.join(started) or 'none'}) than these ({' '.join(command)}); "
            "allowed: the same overrides to continue it, or a new hydra.sweeper.study_name"
        )


class ContinuedStudy(Callback):
    """Continue the study kept in the sweep folder up to ``hydra.sweeper.n_trials`` trials
    in all (see the module's docstring); a new one records the command that started it."""

    def on_multirun_start(self, config: DictConfig, **kwargs) -> None:
        sweeper, sweep_dir = config.hydra.sweeper, Path(config.hydra.sweep.dir)
        command = study_command(config)
        study = optuna.create_study(
            study_name=sweeper.study_name,
            storage=study_storage(sweep_dir),
            direction=getattr(sweeper.direction, "name", sweeper.direction),
            load_if_exists=True,
        )
        try:
            _check_same_study(study, command, sweeper.study_name)
        except ConfigError as error:
            refuse(error)
        study.set_user_attr(STUDY_COMMAND, command)
        trials = study.get_trials(deepcopy=False)
        for trial in trials:  # a sweep killed before its jobs returned left them running
            if trial.state == optuna.trial.TrialState.RUNNING:
                study.tell(trial.number, state=optuna.trial.TrialState.FAIL)
        done = sum(trial.state in DONE for trial in trials)
        if not trials:
            return
        to_go = max(0, sweeper.n_trials - done)
        log.info(
            "study %s continues in %s: %d of %d trials done, %d to go",
            sweeper.study_name,
            sweep_dir / STUDY_FILE,
            done,
            sweeper.n_trials,
            to_go,
        )
        with read_write(sweeper):
            sweeper.n_trials = to_go
            if sweeper.sampler.get("seed") is not None:
                sweeper.sampler.seed += len(trials)
