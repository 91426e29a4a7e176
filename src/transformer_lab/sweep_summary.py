"""The end of a multirun: how many jobs finished, diverged or failed, and the exit code.

A failing job does not stop the sweep (``train.main`` records ``failed.json`` and returns),
so this Hydra callback is where the sweep says what went wrong: it prints one line per
failed job, writes ``summary.json`` into the sweep folder and exits 1 if any job failed.
"""

import json
import logging
import signal
import sys
from pathlib import Path

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from transformer_lab.parallel_jobs import STOP_FILE

log = logging.getLogger(__name__)


def summarize_sweep(sweep_dir: Path) -> dict:
    jobs = sorted(p for p in sweep_dir.iterdir() if (p / ".hydra").is_dir())
    failed = {p.name: json.loads((p / "failed.json").read_text()) for p in jobs
              if (p / "failed.json").is_file()}  # fmt: skip
    finished = [p for p in jobs if (p / "metrics.json").is_file()]
    unfinished = {p.name: "resumable from checkpoints/last.ckpt"
                  if (p / "checkpoints" / "last.ckpt").is_file() else "no checkpoint"
                  for p in jobs if p not in finished and p.name not in failed}  # fmt: skip
    diverged = [p.name for p in finished
                if json.loads((p / "metrics.json").read_text()).get("diverged")]  # fmt: skip
    return {
        "jobs": len(jobs),
        "finished": len(finished),
        "diverged": diverged,
        "failed": {name: f"{f['error']}: {f['message']}" for name, f in failed.items()},
        "unfinished": unfinished,  # stopped by Ctrl-C, killed, or never started
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
        stop_file = sweep_dir / STOP_FILE
        if stop_file.exists():  # Ctrl-C in a parallel sweep (parallel_jobs.py)
            stop_file.unlink()
            saved = sum(state != "no checkpoint" for state in summary["unfinished"].values())
            log.warning(
                "sweep stopped by Ctrl-C: %d jobs saved their last.ckpt (resume commands "
                "above), %d did not start", saved, len(summary["unfinished"]) - saved,
            )  # fmt: skip
            sys.exit(128 + signal.SIGINT)
        if summary["failed"]:
            sys.exit(1)
