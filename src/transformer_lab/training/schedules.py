"""Learning-rate schedules as multipliers of the peak ``lr``, stepped once per optimizer step.

- ``constant``: 1.
- ``linear_warmup``: ``step / warmup`` up to 1, then 1.
- ``noam``: the paper's inverse-square-root warmup, ``min(step / warmup, sqrt(warmup / step))``.
  Vaswani et al. write it as ``d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)``; we
  normalise it so that the configured ``lr`` is the peak reached at ``step == warmup``,
  which keeps ``lr`` comparable across schedules and model sizes.

``step`` counts from 1 (the first update), so no schedule ever multiplies by 0.
"""

import math
from collections.abc import Callable

from transformer_lab.config.validation import check_choice, check_integer

SCHEDULES = ("constant", "linear_warmup", "noam")


def lr_multiplier(name: str, warmup_steps: int) -> Callable[[int], float]:
    """A function of the 0-based scheduler step count, for ``torch.optim.lr_scheduler.LambdaLR``."""
    check_choice("schedule", name, SCHEDULES)
    check_integer("warmup_steps", warmup_steps, minimum=0)
    warmup = max(warmup_steps, 1)
    if name == "constant":
        return lambda step: 1.0
    if name == "linear_warmup":
        return lambda step: min(1.0, (step + 1) / warmup)
    return lambda step: min((step + 1) / warmup, math.sqrt(warmup / (step + 1)))
