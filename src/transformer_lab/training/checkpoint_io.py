"""Checkpoints that are either the old file or the complete new one, never half of each; and
a checkpoint read back, or the reason it cannot be used.

Lightning writes a checkpoint straight onto its final path, so a run killed during the
write leaves a truncated ``last.ckpt`` that cannot be resumed. Writing to a temporary file
in the same folder and renaming it over the target is atomic on POSIX filesystems.
"""

import os
import re
import tempfile
from pathlib import Path
from typing import Any

import torch
from lightning.pytorch.plugins.io import TorchCheckpointIO

from transformer_lab.config.validation import ConfigError, one_line

# what Lightning writes into every checkpoint of a fit with a datamodule, and reads back
PARTS = (
    "state_dict",
    "hyper_parameters",
    "datamodule_hyper_parameters",
    "pytorch-lightning_version",
)


class UnusableCheckpoint(ConfigError):
    """A file that is not a checkpoint of a lab run: the reason, without the file's name,
    which each command names its own way."""


def read_checkpoint(path: Path) -> dict:
    """The checkpoint's contents, or an :class:`UnusableCheckpoint` saying why it is none.

    Read before Lightning builds from it, because Lightning does not tell these apart: an
    unreadable file and weights that do not fit the model both end in a RuntimeError there,
    and a checkpoint without ``datamodule_hyper_parameters`` gives a datamodule of default
    settings. torch's reason is cut to its first sentence (its ``weights_only`` text runs
    to paragraphs); the whole stays the exception's cause.
    """
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # pickle, zip and torch each raise their own kind
        first = re.split(r"(?<=\.)\s", one_line(error, limit=160), maxsplit=1)[0]
        raise UnusableCheckpoint(
            f"not a checkpoint that loads with weights_only=True ({type(error).__name__}: {first})"
        ) from error
    missing = [part for part in PARTS if not isinstance(checkpoint, dict) or part not in checkpoint]
    if missing:
        raise UnusableCheckpoint(
            f"not a transformer_lab training checkpoint: it lacks {', '.join(missing)}"
        )
    return checkpoint


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
