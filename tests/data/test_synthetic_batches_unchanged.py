"""The reverse, copy and sort tasks serve the batches they served before the data package
learned other tasks (pairs from files, addition, recall, SCAN): a hash of the first batches
of every split, for two seeds, pinned from the code of commit b3c98cc."""

import hashlib

import pytest
import torch

from transformer_lab.data.datamodule import SyntheticDataModule

SETTINGS = dict(
    vocab_size=16,
    min_task_len=3,
    max_task_len=10,
    train_size=3000,
    val_size=200,
    test_size=200,
    test_long_size=100,
    test_long_max_task_len=14,
    batch_size=32,
)
PINNED = {
    ("reverse", 0): "70258d1de773384a17529ba42201ec81a88b5fe32044c1818be67a4847c73fc3",
    ("reverse", 7): "558395d850e145daf9cded9ea32627c301267f1fb7f599726b511d7848a0ece9",
    ("copy", 0): "4f5e333f7e64d781de14d69060a3509a3b57cf72e18815001fae81e01f85647a",
    ("copy", 7): "bacc0ed98763926aae69eb905dcbf8bc476de27e8c9d6ad6b11b2868c4548983",
    ("sort", 0): "650bc1bcffccfe7e2de4dbfb1f9a49b396e2008768060392f094ffbb29b9bcf2",
    ("sort", 7): "f6f6f113f2348deaa9fd4faccc30c30c673be9043c53eb60b082eb007e05481f",
}


def batches_digest(task: str, seed: int, num_batches: int = 5) -> str:
    """sha256 over the first ``num_batches`` batches of train (two epochs' starts), val,
    test and test_long: every tensor's shape and values, in order."""
    dm = SyntheticDataModule(task=task, seed=seed, **SETTINGS)
    digest = hashlib.sha256()
    train = dm.train_dataloader()  # iterated twice: the starts of epochs 0 and 1
    loaders = [train, train, dm.val_dataloader(), *dm.test_dataloader()]
    for loader in loaders:
        for i, batch in enumerate(loader):
            if i == num_batches:
                break
            for key in ("src", "tgt_in", "tgt_out"):
                tensor = batch[key].to(torch.int64).contiguous()
                digest.update(key.encode() + str(tuple(tensor.shape)).encode())
                digest.update(tensor.numpy().tobytes())
    return digest.hexdigest()


@pytest.mark.parametrize(("task", "seed"), sorted(PINNED))
def test_synthetic_batches_are_the_ones_served_before(task, seed):
    assert batches_digest(task, seed) == PINNED[task, seed]
