"""What each kind of logger shows besides the scalars: an image, a table, the run's config.

One table, :data:`KINDS`, says how each kind shows each; the callbacks publish through
:func:`log_image` and :func:`log_table`, the job its config through :func:`log_run_config`
(and ends the run through :func:`finish_runs`), and none of them asks which loggers a run
has. A kind not in the table (CSV, MLflow) shows
none of them: the run folder's PNGs and JSON files hold the same. To show them in another
logger, add its row.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import lightning as L
import numpy as np
from lightning.pytorch.loggers import TensorBoardLogger, WandbLogger

Rows = list[list[str]]


@dataclass(frozen=True)
class Kind:
    image: Callable[[Any, str, np.ndarray, int], None]  # (logger, tag, [H, W, 3] uint8, step)
    # (logger, tag, columns, rows, the same as markdown for a viewer of text, step)
    table: Callable[[Any, str, list[str], Rows, str, int], None]
    config: Callable[[Any, dict], None] | None = None  # None: the kind has its own (HPARAMS)
    finish: Callable[[Any], None] | None = None  # at the job's end; None: nothing to finish


KINDS: dict[type, Kind] = {
    TensorBoardLogger: Kind(
        image=lambda logger, tag, image, step: logger.experiment.add_image(
            tag, image, step, dataformats="HWC"
        ),
        table=lambda logger, tag, columns, rows, markdown, step: logger.experiment.add_text(
            tag, markdown, step
        ),
    ),
    WandbLogger: Kind(
        image=lambda logger, tag, image, step: logger.log_image(tag, [image], step=step),
        table=lambda logger, tag, columns, rows, markdown, step: logger.log_table(
            tag, columns=columns, data=rows, step=step
        ),
        config=lambda logger, params: logger.experiment.config.update(
            params, allow_val_change=True
        ),
        # its files complete now, not at the process's exit (a sweep's worker runs on)
        finish=lambda logger: logger.experiment.finish(),
    ),
}


def _kinds(loggers) -> list[tuple[Any, Kind]]:
    return [
        (logger, kind)
        for logger in loggers
        for cls, kind in KINDS.items()
        if isinstance(logger, cls)
    ]


def log_image(trainer: L.Trainer, tag: str, image: np.ndarray, step: int) -> None:
    """``image`` (``[H, W, 3]`` uint8) under ``tag`` in every logger that shows images."""
    for logger, kind in _kinds(trainer.loggers):
        kind.image(logger, tag, image, step)


def log_table(
    trainer: L.Trainer, tag: str, columns: list[str], rows: Rows, markdown: str, step: int
) -> None:
    """A table under ``tag``: ``columns`` and ``rows`` of text where a logger has tables,
    ``markdown`` (the same with any caption) where it shows text (TensorBoard)."""
    for logger, kind in _kinds(trainer.loggers):
        kind.table(logger, tag, columns, rows, markdown, step)


def log_run_config(loggers, params: dict[str, Any]) -> None:
    """``params`` (the job's overridden and curated keys, :func:`.runs.hparams.run_hparams`)
    as the run's config, where a logger keeps one apart from Lightning's hyper-parameters."""
    for logger, kind in _kinds(loggers):
        if kind.config is not None:
            kind.config(logger, params)


def finish_runs(loggers) -> None:
    """End the loggers' runs that need an end of their own (W&B), once the job is done."""
    for logger, kind in _kinds(loggers):
        if kind.finish is not None:
            kind.finish(logger)
