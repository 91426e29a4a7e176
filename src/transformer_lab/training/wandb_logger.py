"""``logger=wandb``: Weights & Biases beside TensorBoard, with no account or network needed.

The mode is ``WANDB_MODE`` where the user set it; else ``online`` where W&B has a key to
log in with (``WANDB_API_KEY``, or the ``.netrc`` entry ``wandb login`` writes for its
host), else ``offline``: the run's files go into ``<run>/wandb/`` and ``wandb sync`` uploads
them later. So a run never stops at W&B's account prompt.

The W&B run is named like the TensorBoard run that ``tensorboard --logdir outputs/`` shows:
the run folder below the outputs root (``runs/<time>``, ``multirun/<sweep>/<overrides>``),
and its id is made from that folder, so a resumed run goes on in the same W&B run. A job
that starts a W&B run finishes the previous one (a parallel sweep's worker runs job after
job in one process); the process's exit finishes the last.
"""

import hashlib
import netrc
import os
from pathlib import Path
from urllib.parse import urlparse

from lightning.pytorch.loggers import WandbLogger

W_AND_B = "https://api.wandb.ai"


def wandb_mode() -> str:
    """``WANDB_MODE`` if set; ``online`` where W&B has a key; ``offline`` otherwise. Only
    whether a key exists is looked at, never the key."""
    if os.environ.get("WANDB_MODE"):
        return os.environ["WANDB_MODE"]
    if os.environ.get("WANDB_API_KEY"):
        return "online"
    host = urlparse(os.environ.get("WANDB_BASE_URL", W_AND_B)).hostname
    try:
        logged_in = netrc.netrc(os.environ.get("NETRC")).authenticators(host) is not None
    except (OSError, netrc.NetrcParseError):  # no .netrc, or one that is not readable
        logged_in = False
    return "online" if logged_in else "offline"


class RunWandbLogger(WandbLogger):
    """Lightning's WandbLogger writing into ``save_dir`` (the run folder), named and
    identified by that folder's place under ``outputs_root``; ``mode`` None: :func:`wandb_mode`."""

    def __init__(
        self,
        save_dir: str,
        outputs_root: str,
        project: str = "transformer_lab",
        mode: str | None = None,
    ):
        run = Path(save_dir).resolve()
        super().__init__(
            name=os.path.relpath(run, Path(outputs_root).resolve()),
            save_dir=str(run),
            id=hashlib.sha1(str(run).encode()).hexdigest()[:16],
            project=project,
            mode=mode or wandb_mode(),
            reinit="finish_previous",
            settings={"quiet": True},  # W&B's own banner and run summary: its files have them
        )
        # Lightning passes anonymous=None to every wandb.init, which W&B (0.19 on) answers
        # with "The anonymous setting has no effect": a setting the lab never sets
        self._wandb_init.pop("anonymous", None)
