"""The tasks and the datamodules that serve them as padded batches: the synthetic tasks,
pairs from files, a real corpus by name (Multi30k), and the research tasks (addition,
recall, SCAN).

One interface for all of them (:class:`SplitsDataModule`): a datamodule takes its task's
own settings and the split settings every one shares (:class:`SplitSettings`: sizes,
batch, seed, workers), makes its splits in ``setup``, says how its ids read as text
(``src_codec``/``tgt_codec``) and how many positions its longest sequence needs
(``max_seq_len``); serving, sharding and resuming are the base class's. A drawn task's
lengths are ``min_task_len..max_task_len`` in its own unit (words, digits, pairs), never
the model's positions (``model.max_len``).
"""

from transformer_lab.data.datamodule import SyntheticDataModule
from transformer_lab.data.multi30k import Multi30kDataModule
from transformer_lab.data.pairs import PairsDataModule
from transformer_lab.data.sampler import EpochShuffle, EvalShard
from transformer_lab.data.serving import SplitsDataModule
from transformer_lab.data.split import Batch, Split, collate
from transformer_lab.data.split_settings import SplitSettings
from transformer_lab.data.tasks import TASKS
from transformer_lab.data.word_tasks import AdditionDataModule, RecallDataModule, ScanDataModule

# Every datamodule a checkpoint may name (its saved state says which, see
# SplitsDataModule.state_dict); a checkpoint that names none is of the synthetic tasks.
DATAMODULES = {
    cls.__name__: cls
    for cls in (
        SyntheticDataModule,
        PairsDataModule,
        Multi30kDataModule,
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
    "Multi30kDataModule",
    "PairsDataModule",
    "RecallDataModule",
    "ScanDataModule",
    "Split",
    "SplitSettings",
    "SplitsDataModule",
    "SyntheticDataModule",
    "collate",
]
