"""``hydra/sweeper=sequential``: an experiment's grid run in stages of seeds, its hypotheses
judged after each stage, seeds added only where a hypothesis is still undecided.

The grid is the basic sweeper's (``hydra.sweeper.params`` and the command line's sweep
overrides, their cross product); the sweeper adds the seeds, ``first`` per configuration,
then doubled up to ``budget``. After each stage it judges the experiment's hypotheses at
that look's share of the level (:mod:`transformer_lab.sweep.sequential`), the way the
report does (:func:`transformer_lab.report.verdicts.judge_looks`), and gives the next stage's
seeds only to the configurations an undecided hypothesis compares. Jobs go through
whatever launcher is configured (``hydra/launcher=joblib`` runs a stage side by side).

The sweep folder is the ordinary one, with ``sequential.json`` (the design) beside
``sweep.json``; the report judges it at its looks. Started again into the same folder
(``hydra.sweep.dir``), the sweep continues: a job whose folder holds ``metrics.json`` is
not run again, and one stopped with a ``last.ckpt`` resumes from it, in its own folder.

Two things make a grid of hours workable on a small machine. A configuration that no
hypothesis compares is not run (a rule ``across`` cells names the cells it needs; a sweep
without hypotheses runs its whole grid). And ``max_minutes`` stops launching jobs once that
long has passed, a few jobs at a time, seeds before configurations (every configuration gets
its first seed before any gets its second), so each invocation ends in about that time and
the same command continues where it stopped.
"""

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.plugins.sweeper import Sweeper
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf

from transformer_lab.config.jobs import SEQUENTIAL_SWEEPER, expand_sweep
from transformer_lab.config.validation import check_number
from transformer_lab.records import write_atomically, write_json
from transformer_lab.report.sweep import load_sweep
from transformer_lab.report.verdicts import Verdict, judge_looks, read_hypotheses
from transformer_lab.runs.reader import Run, overrides_of, read_jobs
from transformer_lab.sweep.hypotheses import (
    Hypothesis,
    expand_across,
    parse_hypotheses,
    same_value,
)
from transformer_lab.sweep.parallel import sweep_stopping
from transformer_lab.sweep.sequential import FILE, LEVEL, SequentialDesign

log = logging.getLogger(__name__)
CHUNK = 8  # jobs launched at a time, between which max_minutes is checked


@dataclass
class SequentialSweeperConf:
    _target_: str = SEQUENTIAL_SWEEPER
    params: dict[str, str] | None = None  # the grid, as the basic sweeper's
    seed_key: str = "seed"  # the override the sweeper sets, one value per run
    first: int = 4  # seeds per configuration at the first look
    budget: int = 16  # seeds per configuration at most; stages double up to it
    level: float = LEVEL  # family-wise, split between the looks
    first_seed: int = 0  # the seeds are first_seed, first_seed + 1, ...
    max_minutes: float | None = None  # stop launching after this long; the command continues


ConfigStore.instance().store(
    group="hydra/sweeper", name="sequential", node=SequentialSweeperConf, provider="transformer_lab"
)


def _matches(run: Run, job: list[str]) -> bool:
    wanted = overrides_of(job)
    return all(same_value(value, run.overrides.get(key)) for key, value in wanted.items())


def _compares(hypothesis: Hypothesis, cell: list[str]) -> bool:
    """Whether the configuration ``cell`` (its overrides) is one the rule compares."""
    overrides = overrides_of(cell)
    return any(hypothesis.runs(overrides, value) for value in hypothesis.values)


class SequentialSweeper(Sweeper):
    def __init__(
        self, params, seed_key, first, budget, level, first_seed, max_minutes=None
    ) -> None:
        self.params = dict(params or {})
        if max_minutes is not None:
            check_number("hydra.sweeper.max_minutes", max_minutes, above=0)
        self.max_minutes = max_minutes
        self.seed_key = seed_key
        self.design = SequentialDesign(first, budget, level, first_seed)
        self.config: DictConfig | None = None
        self.launcher = None
        self.hydra_context: HydraContext | None = None
        self.job_index = 0

    def setup(
        self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig
    ) -> None:
        from hydra.core.plugins import Plugins

        self.hydra_context, self.config = hydra_context, config
        self.launcher = Plugins.instance().instantiate_launcher(
            hydra_context=hydra_context, task_function=task_function, config=config
        )

    def grid(self, arguments: list[str]) -> list[list[str]]:
        """Each configuration's overrides, the basic sweeper's cross product."""
        parser = OverridesParser.create(config_loader=self.hydra_context.config_loader)
        typed = [f"{key}={value}" for key, value in self.params.items()]
        return expand_sweep(parser.parse_overrides([*typed, *arguments]))

    def stage_jobs(
        self, cells: list[list[str]], seeds: list[int], done: list[Run]
    ) -> list[list[str]]:
        """The jobs of ``cells`` x ``seeds`` that have not finished, with the overrides
        they first ran with: one stopped with a ``last.ckpt`` runs again in its own folder
        (named by those overrides) and resumes from it there
        (:func:`transformer_lab.job.resume.own_last_checkpoint`), as a basic sweep's does; no
        ``ckpt_path`` override, which would name a job by a path and tell the report that
        its configuration differs."""
        jobs = []
        for seed in seeds:  # seeds before configurations: a stopped stage covers the grid
            for cell in cells:
                job = [*cell, f"{self.seed_key}={seed}"]
                if not any(run.finished for run in done if _matches(run, job)):
                    jobs.append(job)
        return jobs

    def compared(self, grid: list[list[str]]) -> list[list[str]]:
        """The configurations some hypothesis compares (all of them without hypotheses)."""
        hypotheses = parse_hypotheses(OmegaConf.select(self.config, "hypotheses", default=None))
        if not hypotheses:
            return grid
        hypotheses = expand_across(hypotheses, [overrides_of(cell) for cell in grid])
        return [cell for cell in grid if any(_compares(h, cell) for h in hypotheses)]

    def out_of_time(self, started: float) -> bool:
        return self.max_minutes is not None and time.monotonic() - started > 60 * self.max_minutes

    def why_stop(self, started: float) -> str | None:
        """Why no more jobs are launched now (None: go on). Ctrl-C stops a parallel sweep's
        jobs from starting (:func:`.parallel.sweep_stopping`), and launching them all anyway
        would only walk the rest of the grid, and its later stages, a chunk at a time."""
        if sweep_stopping(self.config.hydra):
            return "Ctrl-C"
        if self.out_of_time(started):
            return f"hydra.sweeper.max_minutes={self.max_minutes:g}"
        return None

    def look(self, sweep_dir: Path, stage: int) -> list[Verdict]:
        """The hypotheses judged on the sweep's runs so far, as the report judges them."""
        sweep = load_sweep(sweep_dir, self.seed_key)
        for left_out in sweep.left_out:  # as the report leaves them out: not in the look
            what = f"{left_out.metric} of {left_out.job}" if left_out.metric else left_out.job
            log.warning("left out of the look: %s: %s", what, left_out.why)
        seeds = [str(seed) for seed in self.design.seeds]
        verdicts = judge_looks(sweep, read_hypotheses(sweep), self.design, seeds)
        for verdict in verdicts:
            log.info(
                "look after %d seeds: %s %s", verdict.look, verdict.hypothesis.id, verdict.word
            )
        return verdicts

    def sweep(self, arguments: list[str]) -> Any:
        sweep_dir = Path(self.config.hydra.sweep.dir)
        sweep_dir.mkdir(parents=True, exist_ok=True)
        write_atomically(sweep_dir / "multirun.yaml", OmegaConf.to_yaml(self.config), "the sweep")
        write_json(sweep_dir / FILE, self.design.record(self.seed_key), "the sequential design")
        grid = self.compared(self.grid(arguments))
        cells, returns = grid, []
        started = time.monotonic()
        for stage in self.design.stages:
            jobs = self.stage_jobs(cells, self.design.seeds[:stage], read_jobs(sweep_dir))
            log.info(
                "stage of %d seeds: %d configurations, %d jobs to run", stage, len(cells), len(jobs)
            )
            for start in range(0, len(jobs), CHUNK):
                reason = self.why_stop(started)
                if reason:
                    log.info(
                        "stopped launching after %s: %d jobs of this stage left; the same "
                        "command continues the sweep",
                        reason,
                        len(jobs) - start,
                    )
                    return returns
                chunk = jobs[start : start + CHUNK]
                returns.append(self.launcher.launch(chunk, initial_job_idx=self.job_index))
                self.job_index += len(chunk)
            if sweep_stopping(self.config.hydra):
                log.info(
                    "stopped by Ctrl-C before the look after %d seeds; the same command "
                    "continues the sweep",
                    stage,
                )
                return returns
            verdicts = self.look(sweep_dir, stage)
            if any(not v.decided and (v.look != stage or v.unfinished) for v in verdicts):
                log.info(
                    "no look after %d seeds: some of its jobs did not finish or were left out "
                    "(see above); the same command runs the unfinished ones again",
                    stage,
                )
                return returns
            undecided = [v.hypothesis for v in verdicts if not v.decided]
            cells = [cell for cell in grid if any(_compares(h, cell) for h in undecided)]
            if not cells:
                log.info("every hypothesis decided after %d seeds", stage)
                break
        else:
            log.info("the budget, %d seeds, spent: %d undecided", stage, len(undecided))
        return returns
