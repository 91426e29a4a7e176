"""How the training went, beyond its loss curve: a stall under gradient clipping told apart
from a run that trains.

With clipping on (``trainer.gradient_clip_val``, 1.0 by default), a run whose updates would
blow up is held to steps of norm 1 and stalls instead of diverging; its loss curve alone
looks like slow learning. So per run, into ``metrics.json`` and HPARAMS:

- ``train/clip_fraction``: the fraction of optimizer steps whose gradient norm, before the
  clip, exceeded ``gradient_clip_val`` (0 with clipping off: nothing was clipped);
- ``train/grad_norm_max``: the largest pre-clip gradient norm (over the finite ones);
- ``train/loss_spikes``: how many times the training loss rose above ``spike_factor`` (2)
  times the median of the ``spike_window`` (50) steps before it (fewer at the start, from
  the second step on); a spike that lasts several steps counts once.

Lightning calls ``on_before_optimizer_step`` after the backward pass (and after AMP's
unscale) but before it clips, so the norm here is the one the clip sees: the 2-norm over
every gradient of the optimizer, as ``clip_grad_norm_`` computes it (under FSDP, of this
rank's shard). The counts are in the callback's state, so a resumed run goes on counting.
"""

import math
import statistics
from collections import deque

import lightning as L
import torch

from transformer_lab.config.validation import check_integer, check_number


class TrainingStability(L.Callback):
    def __init__(self, spike_factor: float = 2.0, spike_window: int = 50):
        check_number("spike_factor", spike_factor, above=1)
        check_integer("spike_window", spike_window, minimum=1)
        self.spike_factor = spike_factor
        self.spike_window = spike_window
        self.steps = 0
        self.clipped = 0
        self.grad_norm_max = 0.0
        self.spikes = 0
        self._in_spike = False
        self._losses: deque[float] = deque(maxlen=spike_window)  # the steps before this one

    @torch.no_grad()
    def on_before_optimizer_step(self, trainer, pl_module, optimizer) -> None:
        grads = [p.grad for group in optimizer.param_groups for p in group["params"]]
        grads = [g for g in grads if g is not None]
        if not grads:
            return
        norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
        norm = norm.item()
        self.steps += 1
        clip = trainer.gradient_clip_val
        if clip is not None and clip > 0 and norm > clip:  # Lightning clips nothing at 0
            self.clipped += 1
        if math.isfinite(norm):
            self.grad_norm_max = max(self.grad_norm_max, norm)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        loss = outputs["loss"].detach().item()
        if self._losses:
            spike = loss > self.spike_factor * statistics.median(self._losses)
            if spike and not self._in_spike:
                self.spikes += 1
            self._in_spike = spike
        self._losses.append(loss)

    def summary(self) -> dict[str, float]:
        """The three numbers under their metric names; empty before the first step."""
        if not self.steps:
            return {}
        return {
            "train/clip_fraction": self.clipped / self.steps,
            "train/grad_norm_max": self.grad_norm_max,
            "train/loss_spikes": float(self.spikes),
        }

    def state_dict(self) -> dict:
        return {
            "steps": self.steps,
            "clipped": self.clipped,
            "grad_norm_max": self.grad_norm_max,
            "spikes": self.spikes,
            "in_spike": self._in_spike,
            "losses": list(self._losses),
        }

    def load_state_dict(self, state_dict: dict) -> None:
        self.steps, self.clipped = state_dict["steps"], state_dict["clipped"]
        self.grad_norm_max, self.spikes = state_dict["grad_norm_max"], state_dict["spikes"]
        self._in_spike = state_dict["in_spike"]
        self._losses = deque(state_dict["losses"], maxlen=self.spike_window)


def training_stability(trainer: L.Trainer) -> dict[str, float]:
    """The run's :meth:`TrainingStability.summary`, or empty without that callback."""
    found = [c for c in trainer.callbacks if isinstance(c, TrainingStability)]
    return found[0].summary() if found else {}
