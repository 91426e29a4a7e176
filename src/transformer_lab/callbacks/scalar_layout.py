"""One TensorBoard custom-scalars layout (the CUSTOM SCALARS tab), the same in every run,
so a sweep's runs overlay on charts that hold a whole picture:

- losses: ``train/loss`` and ``val/loss`` on one chart;
- per stack, every layer's gradient norm on one chart and every layer's residual RMS on
  another (the depth profile that tells post- from pre-norm), when :class:`LayerStats`
  logs them.

Charts name their tags by regular expression (``norm/grad/encoder/\\d+``), so one layout
fits any depth. TensorBoard reads one layout per run, so this callback writes all of it.
The SCALARS tab groups tags by their prefix in alphabetical order and opens the first two
groups: ``epoch`` (Lightning's) and ``norm``, with ``val/`` folded last. Its tag filter,
which the URL carries, puts the ``val/`` charts first: :data:`VAL_FIRST`, printed with the
``tensorboard --logdir`` line of a run and of a sweep (seen in Chromium, TensorBoard 2.21).
"""

import lightning as L

from transformer_lab.callbacks.layer_stats import LayerStats
from transformer_lab.callbacks.stacks import STACKS

LAYER_STATS = {"grad": "gradient norm", "rms": "residual RMS"}
# TensorBoard's SCALARS tab on the val/ charts (tag filter ^val/), at its default port,
# unsmoothed: a run validates a few times, and TensorBoard's default smoothing (0.6) draws
# those few points well below them (a Multi30k run's last val/bleu of 37.7 as 34)
VAL_FIRST = "http://localhost:6006/#scalars&tagFilter=%5Eval%2F&_smoothingWeight=0"


def layout(with_layer_stats: bool) -> dict[str, dict[str, list]]:
    """``{category: {chart title: ["Multiline", [tag regex, ...]]}}``."""
    charts = {"losses": {"train and val loss": ["Multiline", ["^train/loss$", "^val/loss$"]]}}
    if with_layer_stats:
        charts["layers"] = {
            f"{title}, {stack}, every layer": ["Multiline", [rf"^norm/{stat}/{stack}/\d+$"]]
            for stack in STACKS
            for stat, title in LAYER_STATS.items()
        }
    return charts


class ScalarLayout(L.Callback):
    def on_fit_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if not trainer.is_global_zero:
            return
        charts = layout(any(isinstance(c, LayerStats) for c in trainer.callbacks))
        for logger in trainer.loggers:
            if isinstance(logger, L.pytorch.loggers.TensorBoardLogger):
                logger.experiment.add_custom_scalars(charts)
