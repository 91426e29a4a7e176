"""The end of a multirun: how many jobs finished, diverged or failed, and the exit code.

A failing job does not stop the sweep (``train.main`` records ``failed.json`` and returns),
so this Hydra callback is where the sweep says what went wrong: it prints one line per
failed job, writes ``summary.json`` into the sweep folder and exits 1 if any job failed,
or 130 if Ctrl-C stopped a parallel sweep (:mod:`transformer_lab.sweep.parallel`).
"""

import logging
import signal
import sys
from pathlib import Path

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from transformer_lab.callbacks.scalar_layout import VAL_FIRST
from transformer_lab.records import DamagedRecord, write_json
from transformer_lab.runs.layout import last_checkpoint
from transformer_lab.runs.reader import job_folders, read_run
from transformer_lab.sweep.parallel import STOP_FILE

log = logging.getLogger(__name__)


def summarize_sweep(sweep_dir: Path) -> dict:
    """What ``summary.json`` says: the jobs counted, diverged and failed as the report sees
    them (:func:`~transformer_lab.report.sweep.read_jobs`), the jobs that did not end
    (stopped by Ctrl-C, killed, or never started), resumable or not, and the jobs whose
    records are damaged (counted as none of these: which file, and why)."""
    runs, damaged = [], {}
    for folder in job_folders(sweep_dir):
        try:
            runs.append(read_run(folder))
        except DamagedRecord as error:
            damaged[folder.name] = str(error)
    return {
        "jobs": len(runs) + len(damaged),
        "finished": sum(run.finished for run in runs),
        "diverged": [run.name for run in runs if run.diverged],
        "failed": {run.name: run.failure_reason for run in runs if run.failure is not None},
        "unfinished": {
            run.name: _resumable(run) for run in runs if not run.finished and run.failure is None
        },
        "damaged": damaged,
    }


RESUMABLE, NO_CHECKPOINT = "resumable from checkpoints/last.ckpt", "no checkpoint"


def _resumable(run) -> str:
    return RESUMABLE if last_checkpoint(run.path).is_file() else NO_CHECKPOINT


class SweepSummary(Callback):
    def on_multirun_end(self, config: DictConfig, **kwargs) -> None:
        sweep_dir = Path(config.hydra.sweep.dir)
        summary = summarize_sweep(sweep_dir)
        write_json(sweep_dir / "summary.json", summary, "the sweep's summary")
        log.info(
            "sweep %s: %d jobs, %d finished (%d diverged), %d failed%s",
            sweep_dir,
            summary["jobs"],
            summary["finished"],
            len(summary["diverged"]),
            len(summary["failed"]),
            f", {len(summary['damaged'])} damaged" if summary["damaged"] else "",
        )
        log.info("tensorboard: tensorboard --logdir %s (val/ first: %s)", sweep_dir, VAL_FIRST)
        for name, reason in summary["failed"].items():
            log.error("failed: %s -- %s", name, reason)
        for reason in summary["damaged"].values():
            log.error("damaged: %s", reason)
        stop_file = sweep_dir / STOP_FILE
        if stop_file.exists():  # Ctrl-C in a parallel sweep (parallel_jobs.py)
            stop_file.unlink()
            saved = sum(state == RESUMABLE for state in summary["unfinished"].values())
            log.warning(
                "sweep stopped by Ctrl-C: %d jobs saved their last.ckpt (resume commands "
                "above), %d did not start",
                saved,
                len(summary["unfinished"]) - saved,
            )
            sys.exit(128 + signal.SIGINT)
        if summary["failed"] or summary["damaged"]:
            sys.exit(1)
