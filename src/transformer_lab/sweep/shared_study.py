"""The sweeper of ``hparams_search=optuna``: Hydra's Optuna sweeper with its loop made fit
for a study that several workers share.

The plugin's loop (hydra-optuna-sweeper 1.3) runs ``n_trials`` more trials in each worker,
never records a heartbeat (Optuna records them only inside ``study.optimize``), and lets a
NaN objective raise out of the study. This loop, otherwise the plugin's (its search space,
its trial overrides, its ``optimization_results.yaml``), before each batch of ``n_jobs``
trials:

- fails the trials whose worker died: RUNNING, with no heartbeat for the storage's grace
  period (``fail_stale_trials``), while a live worker beats for each trial it runs;
- counts the study's trials that are done or running, in every worker, and asks only the
  ones still to go to ``n_trials``: workers that count at the same moment may each ask a
  batch, so a study ends with at most (workers - 1) x n_jobs trials more than ``n_trials``;
- gives each job its trial's number (``pruning.trial``), for the pruning callback
  (:mod:`transformer_lab.callbacks.trial_pruning`), whose trial the sweeper then leaves
  PRUNED.

A job the sweep stopped (Ctrl-C) returns NaN: its trial fails, to run again when the study
goes on, and the worker launches no further batch.
"""

import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import optuna
from hydra.core.utils import JobReturn
from omegaconf import OmegaConf

from transformer_lab.console import unheard
from transformer_lab.private_apis import (
    optuna_sweeper_class,
    params_from_overrides,
    storage_of,
    trial_id,
    uncached_storage,
)
from transformer_lab.records import write_atomically
from transformer_lab.runs.study_record import TRIAL_KEY
from transformer_lab.sweep.parallel import sweep_stopping

log = logging.getLogger(__name__)

State = optuna.trial.TrialState
COUNTED = (State.COMPLETE, State.PRUNED, State.RUNNING)  # a failed trial runs again


def fail_stale_trials(study: optuna.Study) -> None:
    """Optuna's, without its experimental-feature warning."""
    with unheard("optuna_experimental"):
        optuna.storages.fail_stale_trials(study)


@contextmanager
def heartbeats(study: optuna.Study, trials: Sequence[optuna.Trial]) -> Iterator[None]:
    """While the block runs, a heartbeat for each of ``trials`` every heartbeat interval of
    the storage (none if it has no interval)."""
    storage = storage_of(study)
    if not storage.is_heartbeat_enabled():
        yield
        return
    stop = threading.Event()

    def beat() -> None:
        while True:
            for trial in trials:
                storage.record_heartbeat(trial_id(trial))
            if stop.wait(storage.get_heartbeat_interval()):
                return

    beating = threading.Thread(target=beat, name="optuna-heartbeat", daemon=True)
    beating.start()
    try:
        yield
    finally:
        stop.set()
        beating.join()


def stored_state(study: optuna.Study, trial: optuna.Trial) -> optuna.trial.TrialState:
    """``trial``'s state in the storage itself: the study's cache in this process (Optuna
    2.10's ``_CachedStorage``, which keeps the trials it asked for) has not seen a job
    in another process end the trial."""
    return uncached_storage(study).get_trial(trial_id(trial)).state


def tell(study: optuna.Study, trial: optuna.Trial, result: JobReturn) -> bool:
    """Tell the study ``trial``'s job ``result``, unless the job ended the trial itself
    (pruned); False if the trial failed (no number, or NaN: a job the sweep stopped)."""
    if stored_state(study, trial).is_finished():
        return True
    try:
        value = float(result.return_value)
    except Exception as error:  # the job raised: JobReturn re-raises it
        log.warning("trial %d failed: %s", trial.number, error)
        value = float("nan")
    if value != value:
        study.tell(trial, state=State.FAIL)
        return False
    study.tell(trial, value)
    return True


class SharedStudy(optuna_sweeper_class()):
    """The plugin's sweeper with the loop above (one objective; no grid sampler)."""

    def sweep(self, arguments: list[str]) -> None:
        self._process_searchspace_config()
        space, fixed = params_from_overrides([*self._parse_sweeper_params_config(), *arguments])
        space = {name: d for name, d in space.items() if name not in fixed}
        study = optuna.create_study(
            study_name=self.study_name,
            storage=self.storage,
            sampler=self.sampler,
            directions=self._get_directions(),
            load_if_exists=True,
        )
        while not sweep_stopping(self.config.hydra):
            fail_stale_trials(study)
            counted = len(study.get_trials(deepcopy=False, states=COUNTED))
            batch = min(self.n_jobs, self.n_trials - counted)
            if batch <= 0:
                break
            trials = [study.ask() for _ in range(batch)]
            overrides = [
                (*job, f"{TRIAL_KEY}={trial.number}")
                for trial, job in zip(
                    trials, self._configure_trials(trials, space, fixed), strict=True
                )
            ]
            with heartbeats(study, trials):
                returns = self.launcher.launch(overrides, initial_job_idx=self.job_idx)
            self.job_idx += len(returns)
            told = [
                tell(study, trial, result) for trial, result in zip(trials, returns, strict=True)
            ]
            if not any(told):
                log.error("every trial of the batch failed; this worker stops")
                break
        self._save_best(study)

    def _save_best(self, study: optuna.Study) -> None:
        """The study's best trial so far, in the plugin's ``optimization_results.yaml``."""
        if not study.get_trials(deepcopy=False, states=(State.COMPLETE,)):
            return
        best = study.best_trial
        log.info("Best parameters: %s", best.params)
        log.info("Best value: %s", best.value)
        results = {"name": "optuna", "best_params": best.params, "best_value": best.value}
        path = Path(self.config.hydra.sweep.dir) / "optimization_results.yaml"
        write_atomically(path, OmegaConf.to_yaml(OmegaConf.create(results)), "the best trial")
