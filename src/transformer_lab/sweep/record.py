"""The Hydra callback that writes ``<sweep>/sweep.json`` (:mod:`transformer_lab.runs.sweep_record`)
when a multirun starts, in the sweep's own process, before any job runs: the command, the
keys the sweep varies, and the torch threads of every job (:mod:`.threads`)."""

import sys
from dataclasses import replace
from pathlib import Path

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from transformer_lab.job.threads import ThreadChoice
from transformer_lab.runs.hparams import swept_keys
from transformer_lab.runs.sweep_record import SweepRecord
from transformer_lab.sweep.parallel import runs_in_parallel
from transformer_lab.sweep.threads import sweep_threads


def sweep_record(config: DictConfig) -> SweepRecord:
    """The record of the multirun ``config`` (with its ``hydra`` node) started by this
    process: its command, and the keys its sweep overrides as typed (in
    ``hydra.overrides.task``) and its sweeper's ``params`` vary (and the seeds, which a
    sequential sweeper chooses)."""
    typed = OverridesParser.create().parse_overrides(list(config.hydra.overrides.task))
    sweeper = config.hydra.sweeper
    varied = [*(sweeper.get("params") or {})]
    if sweeper.get("seed_key"):
        varied.append(sweeper.seed_key)
    swept = swept_keys(typed, varied)
    return SweepRecord(tuple(sys.orig_argv), tuple(sys.argv), frozenset(swept))


def decided_threads(config: DictConfig, sweep_dir: Path) -> ThreadChoice:
    """The torch threads of the sweep's jobs: those its first start decided, for a sweep
    continued in its folder (its jobs so far ran with them), else decided now
    (:func:`~transformer_lab.sweep.threads.sweep_threads`)."""
    earlier = SweepRecord.read(sweep_dir)
    if earlier is not None and earlier.torch_threads is not None:
        return ThreadChoice(earlier.torch_threads, earlier.threads_decided_by or "")
    return sweep_threads(config, runs_in_parallel(config.hydra))


class RecordSweep(Callback):
    def on_multirun_start(self, config: DictConfig, **kwargs) -> None:
        sweep_dir = Path(config.hydra.sweep.dir)
        threads = decided_threads(config, sweep_dir)
        record = replace(
            sweep_record(config), torch_threads=threads.threads, threads_decided_by=threads.why
        )
        record.write(sweep_dir)
