"""The end of a multirun: how many jobs finished, diverged or failed, and the exit code.

A failing job does not stop the sweep (``train.main`` records ``failed.json`` and returns),
so this Hydra callback is where the sweep says what went wrong: it prints one line per
failed job, writes ``summary.json`` into the sweep folder and exits 1 if any job failed.
"""

import json
import logging
import sys
from pathlib import Path

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from transformer_lab.report.runs import read_jobs

log = logging.getLogger(__name__)


def summarize_sweep(sweep_dir: Path) -> dict:
    """What ``summary.json`` says: the jobs counted, diverged and failed as the report sees
    them (:func:`~transformer_lab.report.runs.read_jobs`)."""
    runs = read_jobs(sweep_dir)
    return {
        "jobs": len(runs),
        "finished": sum(run.finished for run in runs),
        "diverged": [run.name for run in runs if run.diverged],
        "failed": {run.name: run.failure_reason for run in runs if run.failure is not None},
    }


class SweepSummary(Callback):
    def on_multirun_end(self, config: DictConfig, **kwargs) -> None:
        sweep_dir = Path(config.hydra.sweep.dir)
        summary = summarize_sweep(sweep_dir)
        (sweep_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        log.info(
            "sweep %s: %d jobs, %d finished (%d diverged), %d failed",
            sweep_dir, summary["jobs"], summary["finished"], len(summary["diverged"]),
            len(summary["failed"]),
        )  # fmt: skip
        for name, reason in summary["failed"].items():
            log.error("failed: %s -- %s", name, reason)
        if summary["failed"]:
            sys.exit(1)
