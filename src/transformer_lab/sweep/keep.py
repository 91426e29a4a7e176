"""Carry a sweep to another machine: its records and its finished jobs, without weights.

A long sweep (the `regime` grid is hours of both cores) can outlive the machine it started
on. What its report and its continuation need of a finished job is small: the configs,
``metrics.json``, ``environment.json`` and the TensorBoard scalars, a few kilobytes. Its
checkpoints and tokenizers are most of its bytes and serve only to generate or evaluate.
So ``keep`` copies the sweep's own records (Hydra's ``multirun.yaml``, ``sweep.json`` with
the fingerprint of the rule fixed at its first start and its thread count, a sequential
sweep's design) and every finished job without those, into a folder that may be kept under
version control. Copied back to the sweep's ``hydra.sweep.dir``, the same sweep command
goes on with the jobs it lacks (a job with ``metrics.json`` is not run again), and the
report reads either folder. An unfinished job is not kept: without its ``last.ckpt`` it
would start over anyway.

    python -m transformer_lab.sweep.keep <sweep> <into>     # again later: adds what ended since
"""

import argparse
import shutil
import sys
from pathlib import Path

from transformer_lab.runs.layout import LOCK
from transformer_lab.runs.reader import job_folders, read_run
from transformer_lab.runs.sweep_record import FILE as SWEEP_RECORD
from transformer_lab.sweep.sequential import FILE as DESIGN

RECORDS = ("multirun.yaml", SWEEP_RECORD, DESIGN)  # the sweep's own, beside its jobs
LEFT_BEHIND = ("checkpoints", "tokenizer*.json", LOCK)  # what only generate/evaluate read


class NotASweep(Exception):
    pass


def keep(sweep: Path, into: Path) -> list[str]:
    """Copy ``sweep``'s records and the finished jobs ``into`` lacks; the names of the jobs
    copied. A job already kept is left as it is: a finished job does not change."""
    if not (sweep / "multirun.yaml").is_file():
        raise NotASweep(f"{sweep}: no multirun.yaml; allowed: a sweep folder (hydra.sweep.dir)")
    into.mkdir(parents=True, exist_ok=True)
    for name in RECORDS:
        if (sweep / name).is_file():
            shutil.copy2(sweep / name, into / name)
    staging = into / ".partial"  # below the depth where jobs are found: never half a job
    shutil.rmtree(staging, ignore_errors=True)
    copied = []
    for job in job_folders(sweep):
        kept = into / job.relative_to(sweep)
        if kept.exists() or not read_run(job).finished:
            continue
        shutil.copytree(job, staging, ignore=shutil.ignore_patterns(*LEFT_BEHIND))
        kept.parent.mkdir(parents=True, exist_ok=True)
        staging.rename(kept)
        copied.append(job.name)
    return copied


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m transformer_lab.sweep.keep",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("sweep", type=Path, help="the sweep folder (hydra.sweep.dir)")
    parser.add_argument("into", type=Path, help="where its finished jobs are kept")
    args = parser.parse_args(argv)
    try:
        copied = keep(args.sweep, args.into)
    except NotASweep as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    kept = len(job_folders(args.into))
    print(f"{args.into}: {len(copied)} finished jobs added, {kept} kept in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
