"""``hparams_search=optuna``: report the optimized metric to the job's trial at each
validation, and stop a trial the study's pruner rejects.

The sweeper gives each job its trial's number (``pruning.trial``,
:mod:`transformer_lab.sweep.shared_study`); this callback, in the job's process, opens the
study in its storage with the pruner configured (``pruning.pruner``: ``median``, Optuna's
``MedianPruner``, or ``successive_halving``; ``none``), reports ``optimized_metric`` at
each validation of the fit, with the step as the trial's step, and when the pruner says so,
marks the trial PRUNED and ends the fit there. The job then ends as a run stopped early
does: its final validation and test, ``metrics.json`` with ``stop_reason`` saying it was
pruned, its folder kept; the report lists it apart. ``trial`` None (a job no study runs),
or a trial no longer running (a stopped trial's run resumed by its printed command):
nothing. Imported by that config only, so a plain run never imports Optuna.
"""

import logging

import lightning as L
import optuna
from lightning.pytorch.trainer.states import TrainerFn

from transformer_lab.config.validation import InvalidSetting, check_integer
from transformer_lab.private_apis import storage_of, trial_id_of_number
from transformer_lab.training.final_step import is_final_step

log = logging.getLogger(__name__)

PRUNED_REASON = "pruned by the study's {pruner} pruner"  # metrics.json's stop_reason starts so


def median(startup_trials: int, warmup_steps: int) -> optuna.pruners.BasePruner:
    """Stop a trial whose value at a step is worse than the median of the earlier trials'
    at that step, once ``startup_trials`` trials have finished, after ``warmup_steps``."""
    return optuna.pruners.MedianPruner(n_startup_trials=startup_trials, n_warmup_steps=warmup_steps)


def successive_halving(startup_trials: int, warmup_steps: int) -> optuna.pruners.BasePruner:
    """Keep the best quarter of the trials at each rung (Optuna's reduction factor 4; rungs
    at ``warmup_steps`` x 4^k steps, the first from the finished trials where 0);
    ``startup_trials`` unused."""
    return optuna.pruners.SuccessiveHalvingPruner(min_resource=warmup_steps or "auto")


def none(startup_trials: int, warmup_steps: int) -> optuna.pruners.BasePruner:
    return optuna.pruners.NopPruner()


PRUNERS = {"median": median, "successive_halving": successive_halving, "none": none}


class TrialPruning(L.Callback):
    """Reports ``metric`` to trial number ``trial`` of the study ``study_name`` in
    ``storage`` (an Optuna storage) at each validation of the fit; prunes as ``pruner``
    (a name of :data:`PRUNERS`) says."""

    def __init__(
        self,
        storage,
        study_name: str,
        trial: int | None,
        metric: str,
        pruner: str = "median",
        startup_trials: int = 5,
        warmup_steps: int = 0,
    ):
        if pruner not in PRUNERS:
            raise InvalidSetting("pruner", pruner, "not a pruner", ", ".join(PRUNERS))
        check_integer("startup_trials", startup_trials, minimum=0)
        check_integer("warmup_steps", warmup_steps, minimum=0)
        self.metric, self.pruner_name, self.reason = metric, pruner, None
        self.trial: optuna.Trial | None = None
        if trial is None:
            return
        study = optuna.load_study(
            study_name=study_name,
            storage=storage,
            pruner=PRUNERS[pruner](startup_trials, warmup_steps),
        )
        trial_id = trial_id_of_number(study, trial)
        state = storage_of(study).get_trial(trial_id).state
        if state != optuna.trial.TrialState.RUNNING:  # a stopped trial's run resumed by hand
            log.info("trial %d is %s: its run reports to the study no more", trial, state.name)
            return
        self.study, self.trial = study, optuna.Trial(study, trial_id)

    def on_validation_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        fitting = trainer.state.fn == TrainerFn.FITTING and not trainer.sanity_checking
        value = trainer.callback_metrics.get(self.metric)
        if self.trial is None or not fitting or value is None or not trainer.is_global_zero:
            return
        step = trainer.global_step
        self.trial.report(float(value), step)
        if is_final_step(trainer) or not self.trial.should_prune():
            return
        self.study.tell(self.trial, state=optuna.trial.TrialState.PRUNED)
        self.reason = (
            f"{PRUNED_REASON.format(pruner=self.pruner_name)} at step {step} "
            f"({self.metric} {float(value):.4g})"
        )
        trainer.should_stop = True
        log.info("trial %d %s", self.trial.number, self.reason)
