"""What the lab keeps off the terminal, in one place: every warning it ignores and every log
level it changes, each with why.

Notices reach the terminal that their reader cannot act on: Lightning's tip to install its
cloud logger; torch 2.13's deprecation of the ``LeafSpec`` that Lightning 2.x still builds
for every batch; matplotlib's ``findfont`` warnings (about 21 lines in a fresh virtualenv,
for fonts of styles we never use, each falling back to DejaVu Sans); TensorBoard's reader
announcing every event file it opens; torch.compile's many-line reports (a graph break or
a recompilation; the network itself compiles as one graph, tests/model/test_compile_graph.py);
the torch profiler's ``USDT ... profiler_start/stop`` lines, which its C++ library (Kineto)
prints to stderr whatever Python's logging says, unless ``KINETO_LOG_LEVEL`` is above its highest
level; Lightning's notice that the LightningModule's ``on_before_batch_transfer`` (the
source check before a batch moves, training/module.py) runs although a datamodule is
given, which is what the lab means it to do. Logged notices are dropped below the levels
of :data:`QUIET_LOGGERS`, so neither terminal nor log file repeats them.

A run's terminal has one line of ours per event (its folder, its TensorBoard command, the
model's size, where it stopped, its metrics' file); what a library says at every start in
lines of its own says nothing the run does not record already: Lightning's "Seed set to"
(the run's ``seed``, in its config and HPARAMS) and "GPU/TPU/HPU available" (the devices
it uses are its ``trainer.accelerator``, recorded in ``environment.json``), dropped by
:func:`_drop_lightning_banners`; Lightning's model summary table, which
``callbacks/model_summary.py`` tells in one line; its warning that an epoch has fewer
batches than ``log_every_n_steps`` (a run of files with few pairs), which does not hold
for the lab's step-bounded runs: Lightning counts that interval in optimizer steps across
epochs (``_batches_that_stepped``), as the module's own logging does; Optuna's colour-coded
lines (:func:`quiet_optuna`). Everything else Lightning says stays. And scipy's ``shgo``, the
optimiser inside ``boschloo_exact``, logs each search's bounds (``[[0.0, 1.0]]``) at INFO on
the root logger whatever its ``disp``: under a Hydra sweep, whose root logger takes INFO, one
line for every comparison the sequential design makes at each look
(:func:`without_optimiser_lines`).

The warnings are named in :data:`WARNINGS`; a process ignores some from then on
(:func:`ignore`), a block of code others while it runs (:func:`unheard`).
"""

import importlib
import logging
import os
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch

LIGHTNING_INFO = "lightning.pytorch.utilities.rank_zero"
# logger -> the lowest level that still reaches the terminal
QUIET_LOGGERS = {
    "matplotlib.font_manager": logging.ERROR,
    "tensorboard": logging.WARNING,
    "lightning.fabric.utilities.seed": logging.WARNING,  # "Seed set to": the run's seed setting
}
# Lightning's info lines at every start that a run records otherwise (above), and its note
# that the trainer has a model summary already: the lab's one-line one
LIGHTNING_BANNERS = (
    "GPU available:",
    "TPU available:",
    "HPU available:",
    "litlogger",
    "Trainer already configured with model summary callbacks",
)
KINETO_SILENT = "6"  # Kineto's levels run VERBOSE 0 .. USDT 5
SHGO_SOURCE = "scipy/optimize/_shgo.py"  # where the root-logger lines of boschloo_exact come from

# conf/hydra/launcher/joblib.yaml shares its name with the plugin's structured config, which
# makes Hydra warn, each time it composes a config with that launcher, that it validates one
# against the other; ours names its own _target_, and the check passes.
SCHEMA_NOTICE = r"\s*'hydra/launcher/joblib' is validated against"

# Lightning's warning on resuming a checkpoint written while a ModelCheckpoint(save_last=True)
# kept last.ckpt: that callback's state, the path of last.ckpt, is nothing LastCheckpoint needs
_OLD_LAST_CHECKPOINT_STATE = (
    r"Be aware that when using `ckpt_path`, callbacks used to create the checkpoint need to "
    r"be provided during `Trainer` instantiation\. Please add the following callbacks: "
    r"\[\"ModelCheckpoint\{'monitor': None, 'mode': 'min', 'every_n_train_steps': \d+, "
    r"'every_n_epochs': 0, 'train_time_interval': None\}\"\]\.$"
)


@dataclass(frozen=True)
class Notice:
    """A warning by the start of its message (a regex) and its class, by its dotted path
    (imported only when ignored: this module is imported by every command)."""

    message: str = ""
    category: str = "builtins.Warning"


WARNINGS = {
    # torch 2.13 deprecates the LeafSpec that Lightning 2.x still builds for every batch
    "leaf_spec": Notice(r"`isinstance\(treespec, LeafSpec\)` is deprecated"),
    # the module's on_before_batch_transfer (the source check) runs beside a datamodule on purpose
    "batch_transfer": Notice("You have overridden `on_before_batch_transfer` in `LightningModule`"),
    # a resumed run continues in its own folder on purpose
    "resumed_folder": Notice(r"Checkpoint directory .* exists and is not empty"),
    # "your dataloader is not resumable": the training sampler skips the batches the
    # checkpoint's epoch already trained on (data/datamodule.py), so a resumed run sees exactly
    # the batches an uninterrupted one would (tested)
    "resumed_dataloader": Notice(r".*ended before the epoch ended and your dataloader"),
    # a checkpoint written before last.ckpt had its own callback (callbacks/last_checkpoint.py)
    "old_last_checkpoint": Notice(_OLD_LAST_CHECKPOINT_STATE),
    # Hydra composes with the launcher's config in the process the user started (before any
    # code of the lab runs but its imports: train.cli ignores it first) and in each joblib
    # worker as soon as its job arrives (sweep/parallel.py's ParallelJobs, when unpickled)
    "launcher_schema": Notice(SCHEMA_NOTICE),
    # scipy's t test on nearly equal values; no spread at all is told apart before
    # (report/statistics.py: _no_spread)
    "t_test_precision": Notice("Precision loss occurred", "builtins.RuntimeWarning"),
    # Optuna's experimental features the lab uses on purpose: its plots, fail_stale_trials
    "optuna_experimental": Notice(category="optuna.exceptions.ExperimentalWarning"),
    # an epoch shorter than log_every_n_steps: Lightning logs every that many optimizer
    # steps across epochs, so a step-bounded run of few batches an epoch still logs (above)
    "short_epoch": Notice(r"The number of training batches \(\d+\) is smaller than the logging"),
    # nn.Transformer says that its nested-tensor fast path is off for pre-norm (bench's peer)
    "nested_tensor": Notice("enable_nested_tensor is True"),
    # every warning: a benchmark's output is its timings
    "all": Notice(),
}


def ignore(*names: str) -> None:
    """The warnings ``names`` (of :data:`WARNINGS`) ignored in this process from now on."""
    for name in names:
        warning = WARNINGS[name]
        module, _, cls = warning.category.rpartition(".")
        category = getattr(importlib.import_module(module), cls)
        warnings.filterwarnings("ignore", message=warning.message, category=category)


@contextmanager
def unheard(*names: str, loggers: dict[str, int] | None = None) -> Iterator[None]:
    """While the block runs: the warnings ``names`` ignored, and each logger of ``loggers``
    (name -> level) at its level, its own restored after."""
    levels = {name: logging.getLogger(name).level for name in loggers or {}}
    for name, level in (loggers or {}).items():
        logging.getLogger(name).setLevel(level)
    try:
        with warnings.catch_warnings():
            ignore(*names)
            yield
    finally:
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


def quiet_library_notices() -> None:
    """The library notices every entry point keeps off the terminal (above)."""
    ignore("leaf_spec", "batch_transfer", "short_epoch")
    os.environ.setdefault("KINETO_LOG_LEVEL", KINETO_SILENT)  # read when the profiler starts
    torch._logging.set_logs(dynamo=logging.ERROR)  # torch's documented switch for its logs
    for name, level in QUIET_LOGGERS.items():
        logging.getLogger(name).setLevel(level)
    info = logging.getLogger(LIGHTNING_INFO)
    if _drop_lightning_banners not in info.filters:
        info.addFilter(_drop_lightning_banners)


def _drop_lightning_banners(record: logging.LogRecord) -> bool:
    """A logging filter: False for Lightning's :data:`LIGHTNING_BANNERS`."""
    return not any(banner in record.getMessage() for banner in LIGHTNING_BANNERS)


@contextmanager
def without_optimiser_lines() -> Iterator[None]:
    """While the block runs, the root logger drops the lines scipy's ``shgo`` logs (above);
    every other line, and every line after, passes."""
    root = logging.getLogger()
    root.addFilter(_not_from_shgo)
    try:
        yield
    finally:
        root.removeFilter(_not_from_shgo)


def _not_from_shgo(record: logging.LogRecord) -> bool:
    """A logging filter: False for a line logged in scipy's ``shgo``."""
    return not record.pathname.replace("\\", "/").endswith(SHGO_SOURCE)


def quiet_optuna() -> None:
    """Optuna's log through the lab's (Hydra's) handlers, warnings only: its own handler
    writes ANSI colour codes whatever the terminal, and its info lines ("A new study
    created", then "Using an existing study" as each part of a worker opens it, "Trial n
    finished") repeat what the worker's own lines say. Called where the lab opens a study
    (``sweep/study.py``), which imports Optuna: a plain run never does."""
    import optuna

    optuna.logging.disable_default_handler()
    optuna.logging.enable_propagation()
    optuna.logging.set_verbosity(optuna.logging.WARNING)


def quiet_resume_warnings() -> None:
    """The three warnings Lightning gives a resumed run, all wrong here (:data:`WARNINGS`)."""
    ignore("resumed_folder", "resumed_dataloader", "old_last_checkpoint")


def command_terminal() -> None:
    """The terminal of a command Hydra does not log for (evaluate): log lines on stdout
    ("wrote eval.json"), Lightning's info lines (the devices it found) off, and the notices
    nobody can act on."""
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)
    logging.getLogger(LIGHTNING_INFO).setLevel(logging.WARNING)
    quiet_library_notices()
