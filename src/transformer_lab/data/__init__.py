"""The tasks and the datamodules that serve them as padded batches: the synthetic tasks,
pairs from files, and the research tasks (addition, recall, SCAN)."""

from transformer_lab.data.datamodule import SyntheticDataModule
from transformer_lab.data.pairs import PairsDataModule
from transformer_lab.data.sampler import EpochShuffle, EvalShard
from transformer_lab.data.serving import SplitsDataModule
from transformer_lab.data.split import Batch, Split, collate
from transformer_lab.data.tasks import TASKS
from transformer_lab.data.word_tasks import AdditionDataModule, RecallDataModule, ScanDataModule

# Every datamodule a checkpoint may name (its saved state says which, see
# SplitsDataModule.state_dict); a checkpoint that names none is of the synthetic tasks.
DATAMODULES = {
    cls.__name__: cls
    for cls in (
        SyntheticDataModule,
        PairsDataModule,
        AdditionDataModule,
        RecallDataModule,
        ScanDataModule,
    )
}

__all__ = [
    "DATAMODULES",
    "TASKS",
    "AdditionDataModule",
    "Batch",
    "EpochShuffle",
    "EvalShard",
    "PairsDataModule",
    "RecallDataModule",
    "ScanDataModule",
    "Split",
    "SplitsDataModule",
    "SyntheticDataModule",
    "collate",
]
