"""The Hydra callback that writes ``<sweep>/sweep.json`` (:mod:`transformer_lab.runs.sweep_record`)
when a multirun starts, in the sweep's own process, before any job runs."""

import sys
from pathlib import Path

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from transformer_lab.runs.hparams import swept_keys
from transformer_lab.runs.sweep_record import SweepRecord


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


class RecordSweep(Callback):
    def on_multirun_start(self, config: DictConfig, **kwargs) -> None:
        sweep_record(config).write(Path(config.hydra.sweep.dir))
