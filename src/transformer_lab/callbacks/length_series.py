"""Exact-match accuracy against source length as one scalar series per test split:
``test/seq_acc_vs_len`` (and ``test_long/seq_acc_vs_len``) whose *step is the source
length in words*, so TensorBoard draws one curve per run and a sweep's runs overlay.

The numbers are the test stage's own ``<split>/seq_acc_by_len/<n>`` (which also go to
``metrics.json``), re-logged once at the end of the test, to TensorBoard only.
"""

import lightning as L

from transformer_lab.callbacks.plotting import log_tensorboard_scalars

SPLITS = ("test", "test_long")


def length_series(metrics: dict[str, float], split: str) -> dict[int, float]:
    """``{words: seq_acc}`` of ``split`` from metrics named ``<split>/seq_acc_by_len/<n>``."""
    prefix = f"{split}/seq_acc_by_len/"
    return {int(k[len(prefix) :]): float(v) for k, v in metrics.items() if k.startswith(prefix)}


class LengthSeries(L.Callback):
    def on_test_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if not trainer.is_global_zero:
            return
        for split in SPLITS:
            for words, value in sorted(length_series(trainer.callback_metrics, split).items()):
                log_tensorboard_scalars(trainer, {f"{split}/seq_acc_vs_len": value}, step=words)
