"""Settings that cancel each other: each valid alone, together one of them does nothing.

``trainer.max_steps=300`` with the default ``optim.warmup_steps: 400`` trains, and
linear_warmup, noam and cosine give the same run: the schedule never leaves its warmup.
Nothing is wrong with either value, so nothing refused it; the user's choice of schedule
silently meant nothing. Such pairs are named here, each in one line, before any folder:

- a warning where the run still trains what it says, only one setting has no effect (the
  warmup outlasts the fit; a cosine floor at the peak; validation less often than the fit
  is long, which also leaves the stop at the target nothing to look at);
- a refusal where the run would record a wrong result: a stop at a target below the
  ``outcome:`` rule's threshold ends runs that the rule then calls ``stalled`` (a floor
  above the peak, ``optim.min_lr_ratio`` > 1, is refused by the schedule's own check).

The sweep's check (:class:`~transformer_lab.sweep.checks.ConfigCheck`) prints the warnings,
once per distinct line in a sweep.
"""

from omegaconf import DictConfig

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.runs.outcome import OutcomeRule

WARMUP_SCHEDULES = ("linear_warmup", "noam", "cosine")  # constant has no warmup
# the outcome metrics that the stop at the target (on val/seq_acc) moves with
SEQUENCE_ACCURACIES = ("val/seq_acc", "val/seq_acc_best", "test/seq_acc")


def warmup_outlasts_fit(cfg: DictConfig) -> str | None:
    """The warmup is as long as the fit or longer: the learning rate never reaches its peak
    ``optim.lr``, and the schedules that warm up all train alike."""
    schedule, warmup = cfg.optim.schedule, cfg.optim.warmup_steps
    steps = cfg.trainer.max_steps
    if schedule not in WARMUP_SCHEDULES or warmup < steps:
        return None
    return (
        f"optim.warmup_steps={warmup} >= trainer.max_steps={steps}: optim.schedule={schedule} "
        f"never leaves its warmup (the learning rate ends at {steps / warmup:.2g} of optim.lr), "
        f"and {', '.join(WARMUP_SCHEDULES)} train alike; set optim.warmup_steps below {steps}"
    )


def floor_at_peak(cfg: DictConfig) -> str | None:
    """``cosine`` with its floor at the peak never decays: it is ``linear_warmup``."""
    if cfg.optim.schedule != "cosine" or cfg.optim.min_lr_ratio < 1:
        return None
    return (
        f"optim.min_lr_ratio={cfg.optim.min_lr_ratio}: the cosine schedule's floor is its "
        "peak, so it never decays and trains as optim.schedule=linear_warmup; set "
        "optim.min_lr_ratio below 1"
    )


def validation_outlasts_fit(cfg: DictConfig) -> str | None:
    """A validation interval longer than the fit: the run validates once, at its last step
    (the closing validation), so its val curves have one point and a stop at the target,
    which needs two validations in a row, never comes."""
    interval, steps = cfg.trainer.get("val_check_interval"), cfg.trainer.max_steps
    if not isinstance(interval, int) or isinstance(interval, bool) or interval <= steps:
        return None
    stop = cfg.get("stop_at_seq_acc")
    never = f", and stop_at_seq_acc={stop} never stops it" if stop is not None else ""
    return (
        f"trainer.val_check_interval={interval} > trainer.max_steps={steps}: the run validates "
        f"only at its last step, so its val curves have one point{never}; set "
        f"trainer.val_check_interval to {steps} or less"
    )


def check_stop_reaches_outcome(cfg: DictConfig) -> None:
    """InvalidSetting where the stop at the target ends a run below the ``outcome:`` rule's
    threshold of a sequence accuracy: a run that stops there is called ``stalled``."""
    stop = cfg.get("stop_at_seq_acc")
    rule = OutcomeRule.of_config(cfg)
    if stop is None or rule.metric not in SEQUENCE_ACCURACIES or stop >= rule.threshold:
        return
    raise InvalidSetting(
        "stop_at_seq_acc",
        stop,
        f"below outcome.threshold={rule.threshold:g}: runs stop at val/seq_acc {stop:g}, "
        f"before the outcome rule ({rule.text}) can call them learned",
        f"stop_at_seq_acc >= {rule.threshold:g}, or null",
    )


def cancelling_settings(cfg: DictConfig) -> list[str]:
    """The warnings of ``cfg`` (a run's config, without its ``hydra`` node), in one line each."""
    found = (check(cfg) for check in (warmup_outlasts_fit, floor_at_peak, validation_outlasts_fit))
    return [line for line in found if line]
