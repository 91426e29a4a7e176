"""Synthetic sequence tasks and the data module that serves them as padded batches."""

from transformer_lab.data.datamodule import SyntheticDataModule
from transformer_lab.data.sampler import EpochShuffle, EvalShard
from transformer_lab.data.split import Batch, Split, collate
from transformer_lab.data.tasks import TASKS

__all__ = [
    "TASKS",
    "Batch",
    "EpochShuffle",
    "EvalShard",
    "Split",
    "SyntheticDataModule",
    "collate",
]
