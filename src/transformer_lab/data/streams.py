"""Named random streams of one seed: what makes the data a function of ``seed`` alone."""

import hashlib
import random

import torch


def random_stream(seed: int, *name: object) -> torch.Generator:
    """A ``torch.Generator`` for the random stream ``name`` of ``seed``.

    Separate streams keep draws independent of each other: turning on the ``test_long``
    split does not change train/val/test, and epoch k's shuffle does not depend on how
    many epochs ran before it (so a resumed run sees the same order). The global RNG is
    never touched, so whatever else a run seeds or draws cannot shift the data.
    """
    key = "/".join(str(part) for part in (seed, *name)).encode()
    digest = hashlib.blake2b(key, digest_size=8).digest()
    return torch.Generator().manual_seed(int.from_bytes(digest, "little"))


def python_random(seed: int, *name: object) -> random.Random:
    """A ``random.Random`` for the random stream ``name`` of ``seed``: the tasks whose examples
    are lists of words (addition, recall, SCAN, pairs from files) draw with Python's
    ``random``, seeded from the same named streams as :func:`random_stream`."""
    return random.Random(random_stream(seed, *name).initial_seed())
