"""Weight averaging (``callbacks/averaging=ema|swa``): Lightning's own ``WeightAveraging``,
its average validated, saved as the checkpoint's ``state_dict`` and tested.

Lightning keeps a copy of the module (``torch.optim.swa_utils.AveragedModel``) and updates
it after every optimizer step from the step ``start_fraction * trainer.max_steps`` on:
``decay`` set, an exponential moving average (``avg = decay * avg + (1 - decay) * w``);
``decay`` null, the equal-weight mean of the weights since the start (SWA, Izmailov et al.,
2018). Validations swap the average in, the fit's end copies it into the module (so the
test step and the sample generations use it), and every checkpoint holds the average as
``state_dict`` (what ``evaluate`` and ``generate`` load) with the raw weights under
``current_model_state`` and the average's count under ``averaging_state``, from which a
resume restores both exactly (all tensors: ``torch.load(weights_only=True)`` takes them).

Until its first update the average is only the initial weights: this subclass then leaves
the raw weights in place, for validation, the checkpoint and the fit's end (Lightning would
validate and save the initial ones). A resume is exact either way: the first update copies
the weights it averages. Only a fit's resume reads the average's state back: a test of
``best.ckpt`` after the fit (``test_weights=best``) keeps the average its ``state_dict``
holds, where Lightning would load the raw weights over it.
"""

import logging

import lightning as L
from lightning.pytorch.callbacks import Timer, WeightAveraging
from lightning.pytorch.trainer.states import TrainerFn
from torch.optim.swa_utils import get_ema_avg_fn

from transformer_lab.config.validation import check_number

log = logging.getLogger(__name__)


class AveragedWeights(WeightAveraging):
    """An EMA of the weights (``decay``) or their mean (``decay=None``), updated after every
    step from ``start_fraction`` of ``trainer.max_steps`` on."""

    def __init__(self, decay: float | None = None, start_fraction: float = 0.0):
        if decay is not None:
            check_number("decay", decay, above=0, below=1)
        check_number("start_fraction", start_fraction, minimum=0, below=1)
        # avg_fn None: AveragedModel's equal-weight running mean. Parameters only: the
        # model's buffers are constants (position tables), which averaging would only round
        super().__init__(
            use_buffers=False, avg_fn=get_ema_avg_fn(decay) if decay is not None else None
        )
        self.decay, self.start_fraction = decay, start_fraction
        self.start_step = 0  # the 0-based step of the first update, set when fit starts

    def setup(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        super().setup(trainer, pl_module, stage)
        self.start_step = int(self.start_fraction * trainer.max_steps)
        timed = any(isinstance(c, Timer) for c in trainer.callbacks)
        if timed and self.start_step > 0:  # trainer.max_time: the fit may end before it
            log.warning(
                "averaging starts at step %d (start_fraction=%g of trainer.max_steps=%d), "
                "which trainer.max_time may end the fit before: then the weights are tested "
                "unaveraged; start_fraction=0 averages from the start",
                self.start_step,
                self.start_fraction,
                trainer.max_steps,
            )

    def should_update(self, step_idx: int | None = None, epoch_idx: int | None = None) -> bool:
        return step_idx is not None and step_idx >= self.start_step

    def _has_average(self) -> bool:
        """Whether the average has been updated (in this fit or the one it resumes)."""
        return self._average_model is not None and int(self._average_model.n_averaged) > 0

    def on_validation_epoch_start(self, trainer: L.Trainer, pl_module: L.LightningModule):
        if self._has_average():
            super().on_validation_epoch_start(trainer, pl_module)

    def on_validation_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule):
        if self._has_average():
            super().on_validation_epoch_end(trainer, pl_module)

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if self._has_average():
            super().on_train_end(trainer, pl_module)

    def on_save_checkpoint(
        self, trainer: L.Trainer, pl_module: L.LightningModule, checkpoint: dict
    ) -> None:
        if self._has_average():
            super().on_save_checkpoint(trainer, pl_module, checkpoint)

    def on_load_checkpoint(
        self, trainer: L.Trainer, pl_module: L.LightningModule, checkpoint: dict
    ) -> None:
        """A resume restores the average and the raw weights; a checkpoint saved before the
        first update has no average to restore (the first update will copy the weights)."""
        if trainer.state.fn == TrainerFn.FITTING and "averaging_state" in checkpoint:
            super().on_load_checkpoint(trainer, pl_module, checkpoint)
