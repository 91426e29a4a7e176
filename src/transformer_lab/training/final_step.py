"""Which optimizer step ends a fit, known while that step's batch ends.

The end of a fit matters twice, and both times *inside* the fit loop, at the end of the
final training batch: the closing validation runs there, so it is logged with the same
step convention as every other validation (``learning_curve.py``), and ``last.ckpt`` is
written there, the point Lightning resumes exactly. After the loop has closed
(``on_train_end``, ``trainer.validate()``) the epoch counter has already moved on and the
logging step is one ahead.
"""

import lightning as L


def is_final_step(trainer: L.Trainer) -> bool:
    """Whether the step just taken is the fit's last: ``max_steps`` reached, or the last
    batch of the last of ``max_epochs`` epochs."""
    if trainer.max_steps > 0 and trainer.global_step >= trainer.max_steps:
        return True
    max_epochs = trainer.max_epochs
    last_epoch = max_epochs is not None and 0 < max_epochs <= trainer.current_epoch + 1
    return last_epoch and trainer.is_last_batch
