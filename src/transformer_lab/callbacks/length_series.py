"""Exact-match accuracy against source length as one scalar series per test split:
``test/seq_acc_vs_len`` (and ``test_long/seq_acc_vs_len``) whose *step is the source
length in words*, so TensorBoard draws one curve per run and a sweep's runs overlay.

The numbers are the test stage's own ``<split>/seq_acc_by_len/<n>`` (which also go to
``metrics.json``), re-logged once at the end of the test, to TensorBoard only.
"""

import lightning as L

from transformer_lab.callbacks.publishing import log_tensorboard_scalars
from transformer_lab.training.metric_names import TEST_STAGES, length_series


class LengthSeries(L.Callback):
    def on_test_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if not trainer.is_global_zero:
            return
        for split in TEST_STAGES:
            for words, value in sorted(length_series(trainer.callback_metrics, split).items()):
                log_tensorboard_scalars(trainer, {f"{split}/seq_acc_vs_len": value}, step=words)
