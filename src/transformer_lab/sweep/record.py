"""The Hydra callback that writes ``<sweep>/sweep.json`` (:mod:`transformer_lab.runs.sweep_record`)
when a multirun starts, in the sweep's own process, before any job runs: the command, the
keys the sweep varies, the torch threads of every job (:mod:`.threads`) and the
fingerprint of the rule its hypotheses will be judged by, fixed before the runs (a sweep
continued into its folder keeps its first start's)."""

import sys
from dataclasses import asdict, replace
from pathlib import Path

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from transformer_lab.job.threads import ThreadChoice
from transformer_lab.runs.hparams import swept_keys
from transformer_lab.runs.outcome import OutcomeRule
from transformer_lab.runs.sweep_record import SweepRecord
from transformer_lab.sweep.hypotheses import parse_hypotheses, rule_hash
from transformer_lab.sweep.parallel import runs_in_parallel
from transformer_lab.sweep.sequential import SequentialDesign, is_sequential
from transformer_lab.sweep.threads import sweep_threads


def sweep_rule(config: DictConfig) -> str:
    """:func:`rule_hash` of the multirun ``config``: its hypotheses, its outcome rule and,
    for a sequential sweep, its design."""
    design = (
        SequentialDesign.of_sweeper(config.hydra.sweeper) if is_sequential(config.hydra) else None
    )
    return rule_hash(
        parse_hypotheses(config.get("hypotheses")),
        OutcomeRule.of_config(config),
        None if design is None else asdict(design),
    )


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
    return SweepRecord(tuple(sys.orig_argv), tuple(sys.argv), frozenset(swept), sweep_rule(config))


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
        record, first = sweep_record(config), SweepRecord.read(sweep_dir)
        if first is not None and first.rule is not None:  # a continued sweep: fixed before
            record = replace(record, rule=first.rule)
        threads = decided_threads(config, sweep_dir)
        record = replace(record, torch_threads=threads.threads, threads_decided_by=threads.why)
        record.write(sweep_dir)
