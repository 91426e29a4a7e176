"""Sweep wall time: ``hydra/launcher=joblib`` (jobs side by side) against Hydra's basic
launcher (one after another), on the same jobs.

Both sides are real command-line sweeps of the same short ``experiment=smoke`` jobs (one
seed each), timed from start to exit, so each pays what a user pays: the imports, for
joblib the start of its worker processes, every job's set-up, validations and test. The
basic side runs torch's default threads, as a plain ``-m`` does; the joblib side runs
``min(jobs, cores)`` jobs at once, each pinned to its share of the cores. The sides take
turns over rounds (order flipped each round), the median round kept, like every row.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from transformer_lab.bench.rows import Row
from transformer_lab.bench.timing import seconds_per_call
from transformer_lab.sweep.threads import cores


def train(arguments: list[str], env: dict[str, str] | None = None) -> list[dict]:
    """``python -m transformer_lab.train <arguments>`` in a scratch folder, as a user runs
    it; its runs' ``metrics.json``. A failed run stops the benchmark."""
    with tempfile.TemporaryDirectory() as root:
        command = [sys.executable, "-m", "transformer_lab.train", *arguments]
        command.append(f"paths.outputs_root={root}")
        done = subprocess.run(command, cwd=root, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
        return [json.loads(path.read_text()) for path in sorted(Path(root).rglob("metrics.json"))]


def sweep(launcher: list[str], overrides: list[str]) -> None:
    """One command-line sweep in a scratch folder."""
    train(["-m", *launcher, *overrides])


def launcher_speedup(jobs: int, steps: int, rounds: int) -> Row:
    """Jobs per minute of the parallel launcher over the basic one (higher is better)."""
    overrides = [
        "experiment=smoke",
        f"trainer.max_steps={steps}",
        f"trainer.val_check_interval={max(1, steps // 3)}",
        f"seed={','.join(str(seed) for seed in range(jobs))}",
    ]
    n_jobs = min(jobs, cores())
    parallel = ["hydra/launcher=joblib", f"hydra.launcher.n_jobs={n_jobs}"]
    seconds = seconds_per_call(
        {
            "joblib": lambda: sweep(parallel, overrides),
            "basic": lambda: sweep(["hydra/launcher=basic"], overrides),
        },
        calls=1,
        rounds=rounds,
        warmup=0,
    )
    return Row(
        f"sweep jobs/min, {jobs} x experiment=smoke {steps} steps (CPU): joblib, {n_jobs} at "
        "a time / basic launcher (higher is better)",
        jobs * 60 / seconds["joblib"],
        jobs * 60 / seconds["basic"],
        "jobs/min",
    )
