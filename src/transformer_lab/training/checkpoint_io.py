"""Checkpoints that are either the old file or the complete new one, never half of each; and
a checkpoint read back, or the reason it cannot be used.

Lightning writes a checkpoint straight onto its final path, so a run killed during the
write leaves a truncated ``last.ckpt`` that cannot be resumed. Writing to a temporary file
in the same folder and renaming it over the target is atomic on POSIX filesystems.
"""

import re
import warnings
from pathlib import Path
from typing import Any

import torch
from lightning.pytorch.plugins.io import TorchCheckpointIO

from transformer_lab.config.validation import ConfigError, one_line
from transformer_lab.records import write_atomically
from transformer_lab.training.faults import fault_point

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
    """The checkpoint's contents, or an :class:`UnusableCheckpoint` saying why it is none:
    ``not a checkpoint of this lab (<why>)``.

    Read before Lightning builds from it, because Lightning does not tell these apart: an
    unreadable file and weights that do not fit the model both end in a RuntimeError there,
    and a checkpoint without ``datamodule_hyper_parameters`` gives a datamodule of default
    settings. Every command that takes a checkpoint (evaluate, generate, ``ckpt_path=``,
    ``ckpt_path=last``, a requeued job's own ``last.ckpt``) reads it here first, so a
    hostile or foreign file is one line on each. The line keeps torch's reason but never its
    advice to load the file without ``weights_only`` (which would run whatever code a hostile
    pickle holds); the whole stays the exception's cause.
    """
    try:
        with warnings.catch_warnings():  # torch's notes on pickle protocols of a refused file
            warnings.simplefilter("ignore", UserWarning)
            checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # pickle, zip and torch each raise their own kind
        raise UnusableCheckpoint(f"not a checkpoint of this lab ({_refused(error)})") from error
    missing = [part for part in PARTS if not isinstance(checkpoint, dict) or part not in checkpoint]
    if missing:
        raise UnusableCheckpoint(
            f"not a checkpoint of this lab (it lacks {', '.join(missing)}, which every "
            f"transformer_lab training checkpoint holds)"
        )
    return checkpoint


# what torch's weights-only unpickler found, in its many-paragraph refusal
_FOUND = re.compile(
    r"(WeightsUnpickler error: .+?|Trying to load unsupported GLOBAL .+?)(?:\.? Check the|$)"
)


def _refused(error: Exception) -> str:
    """Why torch could not read a file as a checkpoint: what its weights-only unpickler
    found (an opcode or a global that no checkpoint holds), or the error's first sentence;
    never torch's advice to load without ``weights_only``."""
    if isinstance(error, EOFError):
        return "an empty or cut file"
    text = one_line(error, limit=10_000)
    found = _FOUND.search(text)
    if found:
        return f"torch refuses to unpickle it: {found.group(1)}"
    first = re.split(r"(?<=\.)\s", text, maxsplit=1)[0][:160]
    return f"unreadable by torch.load: {type(error).__name__}: {first}"


class AtomicCheckpointIO(TorchCheckpointIO):
    """Checkpoints written through :func:`~transformer_lab.records.write_atomically`: a
    full disk is one :class:`~transformer_lab.records.RecordNotWritten` naming the file,
    where torch would say ``[enforce fail at inline_container.cc...]``."""

    def save_checkpoint(
        self, checkpoint: dict[str, Any], path, storage_options: Any | None = None
    ) -> None:
        def save(file) -> None:
            torch.save(checkpoint, file)
            fault_point("checkpoint_save")  # written, not yet renamed (tests/faults/)

        write_atomically(Path(path), save, "a checkpoint")
