"""The order a run's records are listed in: metric names and override values alike."""

import re


def natural_key(text: str) -> tuple:
    """Sort key that reads numbers as numbers, for metric names and override values alike:
    ``seq_acc_by_len/3`` before ``/10``; ``2 < 6 < 10 < 1e3`` (values that are numbers,
    by value) before words, ``post < pre``."""
    try:
        return (0, float(text), [])
    except ValueError:
        parts = re.split(r"(\d+)", text)
        return (1, 0.0, [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts])
