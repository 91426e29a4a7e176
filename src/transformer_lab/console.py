"""What the command-line entry points keep off the terminal, and the order they print
metrics in.

Two notices reach every run's terminal that its user cannot act on: Lightning's tip to
install its cloud logger, and torch 2.13's deprecation of the ``LeafSpec`` that Lightning
2.x still builds for every batch. Everything else Lightning says stays.
"""

import logging
import re
import warnings

LIGHTNING_INFO = "lightning.pytorch.utilities.rank_zero"


def quiet_library_notices() -> None:
    warnings.filterwarnings("ignore", message=r"`isinstance\(treespec, LeafSpec\)` is deprecated")
    logging.getLogger(LIGHTNING_INFO).addFilter(
        lambda record: "litlogger" not in record.getMessage()
    )


def metric_order(name: str) -> list[tuple[int, int, str]]:
    """Sort key: numbers in a metric's name by value, ``seq_acc_by_len/3`` before ``/10``."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part)
            for part in re.split(r"(\d+)", name)]  # fmt: skip
