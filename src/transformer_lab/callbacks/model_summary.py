"""The model's size in one line instead of Lightning's summary table.

Lightning prints a table of the LightningModule's children (two rows here: the network and
its metrics) and seven lines of totals at every fit's start, 14 lines a run. What a reader
compares between runs is two numbers: the trainable parameters and the FLOPs of one
forward pass of the module's example batch (``Seq2SeqLitModule.example_input_array``). So
this summary, a :class:`~lightning.pytorch.callbacks.ModelSummary` (which keeps Lightning
from adding its own), logs them in one line of the run's log.
"""

import logging

from lightning.pytorch.callbacks import ModelSummary
from lightning.pytorch.utilities.model_summary import get_human_readable_count

log = logging.getLogger(__name__)


def summary_line(parameters: int, trainable: int, flops: int) -> str:
    """``model: 44.3 K trainable parameters (of 44.3 K), 331 K FLOPs a forward of the
    example batch``; the FLOPs left out where none were counted."""
    line = f"model: {get_human_readable_count(trainable)} trainable parameters"
    if trainable != parameters:
        line += f" (of {get_human_readable_count(parameters)})"
    if flops:
        line += f", {get_human_readable_count(flops)} FLOPs a forward of the example batch"
    return line


class OneLineSummary(ModelSummary):
    """Lightning's model summary, told in :func:`summary_line`."""

    @staticmethod
    def summarize(
        summary_data,
        total_parameters: int,
        trainable_parameters: int,
        model_size: float,
        total_training_modes: dict[str, int],
        total_flops: int = 0,
        **summarize_kwargs,
    ) -> None:
        log.info(summary_line(total_parameters, trainable_parameters, total_flops))
