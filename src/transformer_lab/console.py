"""What the command-line entry points keep off the terminal.

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
of :data:`QUIET_LOGGERS`, so neither terminal nor log file repeats them. Everything else
Lightning says stays.
"""

import logging
import os
import warnings

import torch

LIGHTNING_INFO = "lightning.pytorch.utilities.rank_zero"
# logger -> the lowest level that still reaches the terminal
QUIET_LOGGERS = {
    "matplotlib.font_manager": logging.ERROR,
    "tensorboard": logging.WARNING,
}
KINETO_SILENT = "6"  # Kineto's levels run VERBOSE 0 .. USDT 5


def quiet_library_notices() -> None:
    warnings.filterwarnings("ignore", message=r"`isinstance\(treespec, LeafSpec\)` is deprecated")
    warnings.filterwarnings(
        "ignore", message="You have overridden `on_before_batch_transfer` in `LightningModule`"
    )
    os.environ.setdefault("KINETO_LOG_LEVEL", KINETO_SILENT)  # read when the profiler starts
    torch._logging.set_logs(dynamo=logging.ERROR)  # torch's documented switch for its logs
    for name, level in QUIET_LOGGERS.items():
        logging.getLogger(name).setLevel(level)
    logging.getLogger(LIGHTNING_INFO).addFilter(
        lambda record: "litlogger" not in record.getMessage()
    )
