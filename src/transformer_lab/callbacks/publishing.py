"""One way to publish a figure: to a run's loggers as an image, and as a PNG file (and
:func:`log_scalars` and :func:`log_tensorboard_scalars`, its counterparts for the numbers
behind a figure), from a callback's hook (:func:`figure_hook`). The figure itself is drawn
as everywhere else (:mod:`.plotting`)."""

import functools
from pathlib import Path

import lightning as L
from lightning.pytorch.utilities import rank_zero_only
from matplotlib.figure import Figure
from matplotlib.image import imsave

from transformer_lab.callbacks.logger_kinds import log_image
from transformer_lab.callbacks.plotting import to_image
from transformer_lab.records import write_atomically


def publish(trainer: L.Trainer, tag: str, figure: Figure, step: int, png: Path | None) -> None:
    """Log ``figure`` under ``tag`` to every logger that shows images (TensorBoard, W&B:
    :mod:`.logger_kinds`) and write it to ``png``.

    Callers draw on global rank zero only, where Lightning's loggers write.
    """
    image = to_image(figure)  # drawn once for all
    log_image(trainer, tag, image, step)
    if png is not None:
        write_atomically(
            png, lambda file: imsave(file, image, format="png"), f"the figure {png.name}"
        )


def tensorboard_loggers(trainer: L.Trainer) -> list[L.pytorch.loggers.TensorBoardLogger]:
    return [g for g in trainer.loggers if isinstance(g, L.pytorch.loggers.TensorBoardLogger)]


def log_scalars(trainer: L.Trainer, metrics: dict[str, float], step: int) -> None:
    """Write ``metrics`` at the training step ``step`` to every logger, outside Lightning's
    ``log_every_n_steps``."""
    for logger in trainer.loggers:
        logger.log_metrics(metrics, step=step)


def log_tensorboard_scalars(trainer: L.Trainer, metrics: dict[str, float], step: int) -> None:
    """Write ``metrics`` at ``step`` to the TensorBoard loggers only: a series whose step is
    no training step (a layer, a source length) is a picture TensorBoard draws, while in
    ``metrics.csv`` (``logger=csv``), one row per training step, its rows would pose as steps.
    Its numbers are in the run's own files (``norm_comparison.json``, ``metrics.json``)."""
    for logger in tensorboard_loggers(trainer):
        logger.log_metrics(metrics, step=step)


def figure_hook(method):
    """A callback hook that draws: it runs on global rank zero only, where Lightning's loggers
    write, and not at all in a ``fast_dev_run``, a smoke test (as Lightning's own checkpoints
    and monitors do)."""

    @functools.wraps(method)
    @rank_zero_only
    def hook(self, trainer: L.Trainer, *args, **kwargs):
        if not trainer.fast_dev_run:
            method(self, trainer, *args, **kwargs)

    return hook
