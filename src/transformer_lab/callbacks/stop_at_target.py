"""Stop a run once it has done what it is for: ``val/seq_acc`` at or above a target at
``validations`` consecutive validations.

Lightning's ``EarlyStopping(stopping_threshold=...)`` stops at the *first* validation at
the threshold, and its ``patience`` counts validations without improvement, never
validations at the threshold, so it cannot ask for the target twice in a row; a single
lucky validation (the main job's val/seq_acc wanders by about 0.01 from one to the next)
would end the run. So the lab has its own, this small callback.

The stop is requested at the end of a validation of the fit, which ends the fit there;
:class:`~transformer_lab.callbacks.last_checkpoint.LastCheckpoint` saves ``last.ckpt``
at that point, so the run's last checkpoint is its end; a run resumed from it (killed during
its test) stops there again, at once, for the same reason. Every validation's value goes
into ``stop_at_target.json`` in the run folder as it happens, so a resumed run goes on
counting exactly from its checkpoint's step. ``target`` None switches the
callback off (the comparison sweeps: their fixed budgets make curves
comparable). :func:`how_fit_ended` says how a fit ended, for ``metrics.json``.
"""

import json
import logging
from pathlib import Path

import lightning as L
from lightning.pytorch.callbacks import Timer
from lightning.pytorch.trainer.states import TrainerFn

from transformer_lab.config.validation import check_integer, check_number
from transformer_lab.records import read_json, write_atomically
from transformer_lab.training.final_step import is_final_step
from transformer_lab.training.thresholds import reaches

log = logging.getLogger(__name__)


class StopAtTarget(L.Callback):
    MONITOR = "val/seq_acc"
    FILENAME = "stop_at_target.json"  # [[step, value], ...] of every validation of the fit

    def __init__(
        self, target: float | None = None, validations: int = 2, dirpath: str | None = None
    ):
        if target is not None:  # None: off
            check_number("target", target, above=0, maximum=1)
        check_integer("validations", validations, minimum=1)
        self.target, self.validations, self.dirpath = target, validations, dirpath
        self.seen: list[tuple[int, float]] = []  # (step, value) of each validation so far
        self.stopped_at_step: int | None = None

    def path(self, trainer: L.Trainer) -> Path:
        """``<dirpath>/stop_at_target.json``, by default in ``trainer.default_root_dir``."""
        return Path(self.dirpath or trainer.default_root_dir) / self.FILENAME

    @property
    def streak(self) -> list[tuple[int, float]]:
        """The latest validations, all at the target (none if the latest missed it)."""
        at = [reaches(value, self.target) for _, value in self.seen]
        missed = at[::-1].index(False) if False in at else len(at)
        return self.seen[len(self.seen) - missed :]

    @property
    def reason(self) -> str | None:
        """Why this callback stopped the fit, or None if it did not."""
        if self.stopped_at_step is None:
            return None
        seen = ", ".join(f"{value:.3f} at step {step}" for step, value in self.streak)
        return (
            f"{self.MONITOR} >= {self.target:g} at {self.validations} consecutive "
            f"validations ({seen})"
        )

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        """A resumed fit (its step restored by now) goes on from the validations up to its
        checkpoint's step, that step's own included (the checkpoint was written after it,
        and Lightning does not repeat it); one whose checkpoint is where this callback
        stopped it ends there again."""
        self.stopped_at_step = None
        seen = read_json(self.path(trainer)) or []
        self.seen = [(step, value) for step, value in seen if step <= trainer.global_step]
        at_checkpoint = bool(self.seen) and self.seen[-1][0] == trainer.global_step
        if self.target is not None and at_checkpoint and not is_final_step(trainer):
            self._stop_if_done(trainer)

    def on_validation_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        fitting = trainer.state.fn == TrainerFn.FITTING and not trainer.sanity_checking
        if self.target is None or not fitting:
            return
        self.seen.append((trainer.global_step, float(trainer.callback_metrics[self.MONITOR])))
        if trainer.is_global_zero:
            write_atomically(self.path(trainer), json.dumps(self.seen), "val/seq_acc so far")
        if is_final_step(trainer):  # the fit ends here anyway; an extended run counts on
            return
        self._stop_if_done(trainer)

    def _stop_if_done(self, trainer: L.Trainer) -> None:
        """Stop the fit if the latest validations reached the target often enough."""
        done = len(self.streak) >= self.validations
        if not trainer.strategy.reduce_boolean_decision(done, all=False):  # as every rank
            return
        self.stopped_at_step = trainer.global_step
        trainer.should_stop = True
        log.info(
            "stopped at step %d of trainer.max_steps=%d: %s",
            trainer.global_step,
            trainer.max_steps,
            self.reason,
        )


def how_fit_ended(trainer: L.Trainer, diverged_at: int | None) -> dict:
    """How the fit ended, for ``metrics.json``: ``stopped_early`` (before
    ``trainer.max_steps``) and ``stop_reason``: the target reached (:class:`StopAtTarget`),
    a trial pruned (``callbacks/trial_pruning.py``), a divergence, or the step budget spent.
    A callback that ends a fit early says why in its ``reason`` (None until it does); a
    time budget (``trainer.max_time``: Lightning's ``Timer``) is spent when none remains."""
    if diverged_at is not None:
        reason = f"diverged at step {diverged_at}"
    else:
        reasons = (getattr(c, "reason", None) for c in trainer.callbacks)
        reached = next((r for r in reasons if r), None) or _time_spent(trainer)
        reason = reached or f"trainer.max_steps={trainer.max_steps} reached"
    return {"stopped_early": trainer.global_step < trainer.max_steps, "stop_reason": reason}


def _time_spent(trainer: L.Trainer) -> str | None:
    """Why a fit with a time budget ended, where the budget is what ended it."""
    timer = next((c for c in trainer.callbacks if isinstance(c, Timer)), None)
    remaining = timer and timer.time_remaining()
    if remaining is None or remaining > 0:
        return None
    return (
        f"trainer.max_time spent: {timer.time_elapsed():.0f} s of fit at step {trainer.global_step}"
    )
