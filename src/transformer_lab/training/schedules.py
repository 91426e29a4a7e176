"""Learning-rate schedules as multipliers of the peak ``lr``, stepped once per optimizer step.

- ``constant``: 1.
- ``linear_warmup``: ``step / warmup`` up to 1, then 1.
- ``noam``: the paper's inverse-square-root warmup, ``min(step / warmup, sqrt(warmup / step))``.
  Vaswani et al. write it as ``d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)``; we
  normalise it so that the configured ``lr`` is the peak reached at ``step == warmup``,
  which keeps ``lr`` comparable across schedules and model sizes.
- ``cosine``: ``step / warmup`` up to 1, then half a cosine from 1 down to ``min_lr_ratio``,
  reached at the fit's last step (``trainer.max_steps``), as nanoGPT and fairseq train:
  ``floor + (1 - floor) * (1 + cos(pi * (step - warmup) / (max_steps - warmup))) / 2``.

``step`` counts from 1 (the first update), so no schedule ever multiplies by 0.
"""

import math
from collections.abc import Callable

from transformer_lab.config.validation import (
    InvalidSetting,
    check_choice,
    check_integer,
    check_number,
)

SCHEDULES = ("constant", "linear_warmup", "noam", "cosine")


def check_schedule(name: str, warmup_steps: int, min_lr_ratio: float) -> None:
    """InvalidSetting for the first of the schedule's own settings that cannot work."""
    check_choice("schedule", name, SCHEDULES)
    check_integer("warmup_steps", warmup_steps, minimum=0)
    check_number("min_lr_ratio", min_lr_ratio, minimum=0, maximum=1)


def lr_multiplier(
    name: str, warmup_steps: int, min_lr_ratio: float = 0.0, max_steps: int | None = None
) -> Callable[[int], float]:
    """A function of the 0-based scheduler step count, for ``torch.optim.lr_scheduler.LambdaLR``.
    ``max_steps``: the fit's length, over which ``cosine`` decays (the others ignore it)."""
    check_schedule(name, warmup_steps, min_lr_ratio)
    warmup = max(warmup_steps, 1)
    if name == "constant":
        return lambda step: 1.0
    if name == "linear_warmup":
        return lambda step: min(1.0, (step + 1) / warmup)
    if name == "noam":
        return lambda step: min((step + 1) / warmup, math.sqrt(warmup / (step + 1)))
    if max_steps is None:
        raise InvalidSetting(
            "schedule", name, "decays over trainer.max_steps, unknown here", "a Trainer's fit"
        )
    return lambda step: _cosine((step + 1), warmup, min_lr_ratio, max_steps)


def _cosine(step: int, warmup: int, floor: float, max_steps: int) -> float:
    """The ``cosine`` multiplier of the 1-based ``step``; the floor from ``max_steps`` on."""
    if step <= warmup:
        return step / warmup
    progress = min(1.0, (step - warmup) / max(max_steps - warmup, 1))
    return floor + (1 - floor) * (1 + math.cos(math.pi * progress)) / 2
