"""Where a run keeps its checkpoints and its record, and which run a checkpoint belongs to.

A run folder is what training leaves: Hydra writes the config as given into its
``.hydra/``, the checkpoint callbacks (``conf/callbacks/default.yaml``) write
``checkpoints/last.ckpt`` and ``checkpoints/best.ckpt``, and the run's end writes
``metrics.json`` (a run stopped by a signal: ``stopped.json``). Evaluation takes a run
folder for its last or best checkpoint (``test_weights``) and writes ``eval.json`` into
the checkpoint's run; a resumed run goes on writing in it.
"""

from pathlib import Path

from transformer_lab.records import read_json

# which of a run's weights are tested: the final ones, or those of the best val/seq_acc
TEST_WEIGHTS = ("last", "best")
LOCK = ".run.lock"  # held by the one process that writes the run (job/run_lock.py)


def last_checkpoint(run: Path) -> Path:
    """The checkpoint a run saved last: periodically, when stopped, and at its end."""
    return run / "checkpoints" / "last.ckpt"


def tested_checkpoint(run: Path, test_weights: str) -> Path:
    """The run's ``checkpoints/last.ckpt`` or ``checkpoints/best.ckpt`` (the best
    ``val/seq_acc``), by ``test_weights``."""
    return last_checkpoint(run).with_name(f"{test_weights}.ckpt")


def stop_record(run: Path) -> Path:
    """``stopped.json``: where a run stopped on Ctrl-C or SIGTERM and how to resume it;
    gone again once a resume goes on."""
    return run / "stopped.json"


def recorded_metrics(run: Path) -> dict | None:
    """The run's ``metrics.json`` (written when it ended, finished or diverged: its
    ``global_step`` is where it ended), or None for a run that has not ended;
    :class:`~transformer_lab.records.DamagedRecord` naming it where it is damaged."""
    return read_json(metrics_record(run))


def metrics_record(run: Path) -> Path:
    """``metrics.json``: the run's final metrics, written once its test is recorded."""
    return run / "metrics.json"


def failure_record(run: Path) -> Path:
    """``failed.json``: why a job of a sweep failed; gone again once the job runs anew."""
    return run / "failed.json"


def run_folder_of(checkpoint: Path) -> Path | None:
    """The run folder holding ``checkpoint`` (``<run>/checkpoints/<name>.ckpt`` beside
    ``<run>/.hydra``), or None for a checkpoint kept anywhere else."""
    folder = checkpoint.resolve().parent
    run = folder.parent
    return run if folder.name == "checkpoints" and (run / ".hydra").is_dir() else None
