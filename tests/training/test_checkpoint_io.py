"""An interrupted checkpoint save never leaves a corrupt file behind."""

import pytest
import torch

from transformer_lab.training.checkpoint_io import AtomicCheckpointIO


def test_a_save_that_dies_midway_leaves_the_previous_checkpoint_intact(tmp_path, monkeypatch):
    path = tmp_path / "checkpoints" / "last.ckpt"
    io = AtomicCheckpointIO()
    io.save_checkpoint({"global_step": 1, "w": torch.ones(3)}, path)

    def dies_after_writing_half(obj, f, *args, **kwargs):
        f.write(b"half a checkpoint")
        raise KeyboardInterrupt

    monkeypatch.setattr(torch, "save", dies_after_writing_half)
    with pytest.raises(KeyboardInterrupt):
        io.save_checkpoint({"global_step": 2, "w": torch.zeros(3)}, path)
    monkeypatch.undo()

    restored = torch.load(path, weights_only=True)
    assert restored["global_step"] == 1
    assert torch.equal(restored["w"], torch.ones(3))
    assert [p.name for p in path.parent.iterdir()] == ["last.ckpt"]  # no temp file left


def test_a_completed_save_replaces_the_checkpoint(tmp_path):
    path = tmp_path / "last.ckpt"
    io = AtomicCheckpointIO()
    io.save_checkpoint({"global_step": 1}, path)
    io.save_checkpoint({"global_step": 2}, path)
    assert torch.load(path, weights_only=True)["global_step"] == 2
