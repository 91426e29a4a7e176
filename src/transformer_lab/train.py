"""The main job: ``python -m transformer_lab.train [overrides]`` (also ``tlab-train``).

Hydra composes ``conf/train.yaml`` (after :class:`~transformer_lab.sweep.checks.ConfigCheck`
checked it), and :func:`transformer_lab.job.run.train` runs the job in its run folder.
Here: what the job's end means for the process. A single run exits 2 on a configuration error
(a run folder another process writes into among them), 1 with one line naming the file on
a record it cannot write (a full disk) or read (a damaged one), and 130/143 on
Ctrl-C/SIGTERM (a job of submitit's, on SLURM's warning signal, is requeued);
in a sweep a failing job is recorded and the sweep goes on,
and the value of ``optimized_metric`` goes back to the sweeper.
"""

import logging
import os
import sys
import threading

import hydra
import torch
from omegaconf import DictConfig

from transformer_lab.callbacks import Interrupted
from transformer_lab.config import hydra_saves
from transformer_lab.config.command_line import composed, composed_once, end_composition
from transformer_lab.config.help import topic_help
from transformer_lab.config.validation import ConfigError
from transformer_lab.console import ignore, quiet_library_notices
from transformer_lab.job.checks import refuse
from transformer_lab.job.context import RunContext
from transformer_lab.job.run import record_failure, train
from transformer_lab.job.run_lock import FolderInUse
from transformer_lab.model.config import AXES, TransformerConfig
from transformer_lab.records import DamagedRecord, RecordNotWritten, fail
from transformer_lab.sweep import (
    naming,  # noqa: F401 (registers ${job_name:}, before Hydra composes)
    parallel,
    search_space,  # noqa: F401 (registers ${warmup_range:}, for the optuna search space)
    threads,  # noqa: F401 (registers ${sweep_n_jobs:})
)
from transformer_lab.sweep.objective import STOPPED, objective, worst_value
from transformer_lab.sweep.threads import job_threads
from transformer_lab.sweep.tune_extra import check_tuning_installed
from transformer_lab.training.optim import OptimConfig

log = logging.getLogger("transformer_lab.train")  # also under python -m, not "__main__"
# ``--help <topic> [overrides]``: a typed node's settings (Hydra's own --help is the rest)
HELP_TOPICS = {"model": (TransformerConfig, AXES), "optim": (OptimConfig, {})}
hydra_saves.install()  # here, at import: a parallel sweep's worker imports this module too
# Ctrl-C between jobs of a sweep, or while a run sets up or tests: no training step is
# lost, so one line says so instead of Python's traceback
OUTSIDE_FIT_INTERRUPT = (
    "stopped by Ctrl-C outside training: every trained step is in its run's last.ckpt "
    "(the same command continues a sweep)"
)


@hydra.main(version_base="1.3", config_path="pkg://transformer_lab.conf", config_name="train")
def main(cfg: DictConfig) -> float:
    """Run one job. In a sweep a failing job is recorded and the sweep goes on; the value
    of ``optimized_metric`` goes back to the sweeper, the worst one for a failed job."""
    end_composition()  # where no ConfigCheck ended it
    quiet_library_notices()
    context = RunContext.from_hydra()
    if parallel.sweep_stopping(context.hydra):  # Ctrl-C: no job starts any more
        return STOPPED
    n_jobs = context.hydra.launcher.n_jobs if parallel.runs_in_parallel(context.hydra) else None
    chosen = job_threads(cfg.threads, context.sweep_threads, n_jobs)  # the sweep's, in a sweep
    torch.set_num_threads(chosen.threads)
    # the user's own variable: nothing to say on a terminal; a parallel job's log says it
    if "OMP_NUM_THREADS" not in os.environ or n_jobs is not None:
        log.info(chosen.line)
    context = context.with_threads(chosen)
    try:
        metrics = train(cfg, context)
    except Interrupted as stop:  # last.ckpt and stopped.json saved; exit 130 or 143
        stop.pass_on()  # SLURM's warning signal: submitit requeues the job and exits
        if not parallel.runs_in_parallel(context.hydra):
            sys.exit(stop.exit_code)
        return STOPPED  # the worker lives on; the sweep exits 130
    except FolderInUse as error:  # its owner writes its records, not this process
        if not context.in_sweep:
            refuse(error)
        log.error("%s", error)
        return worst_value(cfg.optimized_metric)
    except ConfigError as error:  # a trial's drawn value; a callback's, logger's, trainer's
        if not context.in_sweep:
            refuse(error)
        log.error("configuration error: %s", error)  # the job's log; the sweep goes on
        record_failure(error, context)
        return worst_value(cfg.optimized_metric)
    except (RecordNotWritten, DamagedRecord) as error:  # a full disk, a damaged record
        if not context.in_sweep:
            fail(error)
        log.error("%s", error)
        record_failure(error, context)
        return worst_value(cfg.optimized_metric)
    except Exception as error:
        if not context.in_sweep:
            raise
        log.exception("job failed")
        record_failure(error, context)
        return worst_value(cfg.optimized_metric)
    return objective(cfg.optimized_metric, metrics)


def print_topic_help(topic: str, overrides: list[str]) -> None:
    """``--help model [overrides]``: every setting of the node ``topic`` with the value the
    overrides give it, its meaning, its class's default and an option's choices
    (:func:`~transformer_lab.config.help.topic_help`)."""
    cls, registries = HELP_TOPICS[topic]
    try:
        node = composed(overrides)[topic]
    except ConfigError as error:
        refuse(error)
    print(topic_help(topic, cls, node, registries))


def _quiet_event_writer(hook):
    """``threading.excepthook`` without TensorBoard's event writer thread's OSError (a full
    disk): its traceback would reach the terminal as it happens, and the same error is
    raised again in the run by the logger's next flush, where the run says it in one line
    (:func:`transformer_lab.records.unwritten`)."""

    if getattr(hook, "quiet_event_writer", False):  # installed by an earlier command
        return hook

    def excepthook(args) -> None:
        writer = type(args.thread).__name__ == "_AsyncWriterThread"
        if not (writer and issubclass(args.exc_type, OSError)):
            hook(args)

    excepthook.quiet_event_writer = True
    return excepthook


def cli() -> None:
    """``python -m transformer_lab.train`` and ``tlab-train``: :func:`main`, once the
    command line composes, once (:func:`~transformer_lab.config.command_line.composed_once`:
    a typo is one line and exit status 2, not Hydra's text), a command that asks for a
    sweeper this install lacks is refused before Hydra composes it
    (:mod:`~transformer_lab.sweep.tune_extra`), and the notice that Hydra prints whenever it
    composes the joblib launcher's config is hidden
    (:data:`~transformer_lab.console.WARNINGS`), and a Ctrl-C outside training is one line
    and exit status 130. ``--help model`` and ``--help optim`` print those settings
    (:func:`print_topic_help`)."""
    ignore("launcher_schema")
    arguments = sys.argv[1:]
    if arguments[:1] in (["--help"], ["-h"]) and arguments[1:2] and arguments[1] in HELP_TOPICS:
        print_topic_help(arguments[1], arguments[2:])
        return
    threading.excepthook = _quiet_event_writer(threading.excepthook)
    try:
        check_tuning_installed(arguments)
        with composed_once(arguments):
            main()
    except ConfigError as error:  # the command line, refused before any folder
        refuse(error)
    except KeyboardInterrupt:  # outside fit, whose own handler saves last.ckpt and exits 130
        print(OUTSIDE_FIT_INTERRUPT, file=sys.stderr, flush=True)
        sys.exit(130)


if __name__ == "__main__":
    cli()
