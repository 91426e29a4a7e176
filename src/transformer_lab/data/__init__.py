"""Synthetic sequence tasks and the data module that serves them as padded batches."""

from transformer_lab.data.datamodule import Batch, EpochShuffle, Split, SyntheticDataModule, collate
from transformer_lab.data.tasks import TASKS

__all__ = ["TASKS", "Batch", "EpochShuffle", "Split", "SyntheticDataModule", "collate"]
