"""Which checkpoint ``ckpt_path`` means, and where a resumed run keeps writing.

``ckpt_path=last`` is the newest ``checkpoints/last.ckpt`` of an earlier run *of the same
experiment*: a run (or sweep job) under ``paths.outputs_root`` whose saved
``.hydra/config.yaml`` equals the current config but for ``ckpt_path``. A resumed run
continues in the folder its checkpoint came from, so TensorBoard shows one curve going on
from the checkpoint's step instead of a second run starting over.
"""

from pathlib import Path

from omegaconf import DictConfig, OmegaConf


class CheckpointNotFound(ValueError):
    pass


def _experiment(cfg: DictConfig) -> dict:
    config = OmegaConf.to_container(cfg, resolve=False)
    config.pop("ckpt_path", None)
    return config


def _runs(outputs_root: Path):
    yield from outputs_root.glob("runs/*")
    yield from outputs_root.glob("multirun/*/*")


def find_last_checkpoint(cfg: DictConfig) -> Path:
    wanted = _experiment(cfg)
    candidates = []
    for run in _runs(Path(cfg.paths.outputs_root)):
        last, saved = run / "checkpoints" / "last.ckpt", run / ".hydra" / "config.yaml"
        if last.is_file() and saved.is_file() and _experiment(OmegaConf.load(saved)) == wanted:
            candidates.append(last)
    if not candidates:
        raise CheckpointNotFound(
            f"ckpt_path=last: no run of this experiment under {cfg.paths.outputs_root}/ has "
            f"checkpoints/last.ckpt; give ckpt_path=<file> or start without ckpt_path"
        )
    return max(candidates, key=lambda p: p.stat().st_mtime)


def resolve_checkpoint(cfg: DictConfig) -> Path | None:
    """The checkpoint file to resume from, or None to start fresh."""
    if cfg.ckpt_path is None:
        return None
    if cfg.ckpt_path == "last":
        return find_last_checkpoint(cfg)
    path = Path(cfg.ckpt_path)
    if not path.is_file():
        raise CheckpointNotFound(
            f"ckpt_path={cfg.ckpt_path!r} does not exist; allowed: an existing checkpoint "
            f"file, 'last', or null"
        )
    return path


def run_folder_of(checkpoint: Path) -> Path | None:
    """The run folder a checkpoint belongs to (``<run>/checkpoints/x.ckpt``), if any."""
    run = checkpoint.resolve().parent.parent
    return run if checkpoint.parent.name == "checkpoints" and (run / ".hydra").is_dir() else None
