"""Per-layer training statistics every K steps, under tags that overlay across a sweep.

For each encoder and decoder layer, on every ``every_n_steps``-th training step:

- ``norm/grad/<stack>/<i>``: the gradient norm of all the layer's parameters (before
  clipping), the quantity whose depth profile separates post- from pre-norm;
- ``norm/rms/<stack>/<i>``: the root mean square of the residual stream after the layer
  (post-norm keeps it near 1; pre-norm lets it grow with depth);
- ``norm/update/<stack>/<i>``: ``||W_after - W_before|| / ||W_before||`` over the layer's
  parameters for this step's optimizer update (the effective learning rate per layer).

The tag names carry no run-specific part, so ``tensorboard --logdir <sweep>`` draws the pre-
and post-norm runs of a sweep on one chart per layer. Between measured steps nothing is
hooked or copied.
"""

import lightning as L
import torch

from transformer_lab.callbacks.publishing import log_scalars
from transformer_lab.callbacks.stacks import global_norm, stacks
from transformer_lab.config.validation import check_integer


class LayerStats(L.Callback):
    def __init__(self, every_n_steps: int = 50):
        check_integer("every_n_steps", every_n_steps, minimum=1)
        self.every_n_steps = every_n_steps
        self._step: int | None = None  # the step being measured, None between measured steps
        self._hooks = []
        self._metrics: dict[str, float] = {}
        self._before: dict[str, list[torch.Tensor]] = {}

    def _layers(self, pl_module):
        for stack, layers in stacks(pl_module.model).items():
            for i, layer in enumerate(layers):
                yield f"{stack}/{i}", layer

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        if trainer.global_step % self.every_n_steps:
            return
        self._step = trainer.global_step
        for name, layer in self._layers(pl_module):
            self._hooks.append(layer.register_forward_hook(self._rms_hook(name)))

    def _rms_hook(self, name: str):
        def hook(module, inputs, outputs) -> None:
            x = outputs[0].detach()  # [B, L, D]: a layer returns (x, attention weights...)
            self._metrics[f"norm/rms/{name}"] = x.float().pow(2).mean().sqrt().item()

        return hook

    def on_before_optimizer_step(self, trainer, pl_module, optimizer) -> None:
        if self._step is None:
            return
        for name, layer in self._layers(pl_module):
            params = [p for p in layer.parameters() if p.grad is not None]
            self._metrics[f"norm/grad/{name}"] = global_norm([p.grad for p in params])
            self._before[name] = [p.detach().clone() for p in layer.parameters()]

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        if self._step is None:
            return
        for handle in self._hooks:
            handle.remove()
        self._hooks.clear()
        for name, layer in self._layers(pl_module):
            before = self._before.pop(name, None)
            if before is None:  # no optimizer step this batch (e.g. gradient accumulation)
                continue
            after = list(layer.parameters())
            change = global_norm([a.detach() - b for a, b in zip(after, before, strict=True)])
            self._metrics[f"norm/update/{name}"] = change / global_norm(before)
        if trainer.is_global_zero:
            log_scalars(trainer, self._metrics, step=self._step)
        self._metrics, self._step = {}, None
