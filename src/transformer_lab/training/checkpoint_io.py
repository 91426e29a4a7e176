"""Checkpoints that are either the old file or the complete new one, never half of each.

Lightning writes a checkpoint straight onto its final path, so a run killed during the
write leaves a truncated ``last.ckpt`` that cannot be resumed. Writing to a temporary file
in the same folder and renaming it over the target is atomic on POSIX filesystems.
"""

import os
import tempfile
from pathlib import Path
from typing import Any

import torch
from lightning.pytorch.plugins.io import TorchCheckpointIO


class AtomicCheckpointIO(TorchCheckpointIO):
    def save_checkpoint(
        self, checkpoint: dict[str, Any], path, storage_options: Any | None = None
    ) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                torch.save(checkpoint, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
