"""Distinct random examples of a task, as padded tensors: the pure part of the data.

One example, for source words ``w`` and target ``t = task(w)`` (all content ids)::

    src     = w + [EOS]            # what the encoder reads
    tgt_in  = [BOS] + t            # what the decoder reads (teacher forcing)
    tgt_out = t + [EOS]            # what the decoder must predict at each position

so ``tgt_in[i + 1] == tgt_out[i]``; rows are right-padded with ``PAD`` and the loss
ignores ``PAD`` labels.

Every source of one call is distinct, which is what lets the data module cut held-out
splits from one pool. Examples are made one length at a time with a handful of tensor
ops, so tens of thousands cost well under a second. Nothing here knows Lightning.
"""

from collections.abc import Callable

import torch

from transformer_lab.tokens import BOS, EOS, FIRST_CONTENT, PAD

Task = Callable[[torch.Tensor], torch.Tensor]


def num_sequences(num_words: int, min_len: int, max_len: int) -> int:
    """How many distinct word sequences have a length in ``min_len..max_len``."""
    return sum(num_words**length for length in range(min_len, max_len + 1))


def length_counts(
    total: int, num_words: int, min_len: int, max_len: int, generator: torch.Generator
) -> list[int]:
    """How many examples of each length ``min_len..max_len``: uniform draws.

    A short length can have fewer distinct sequences than its uniform share (16 ids at
    length 3 give 13**3 = 2197); it is then used up entirely and its overflow is drawn
    uniformly over the lengths that still have room. Needs ``total`` <= the number of
    distinct sequences (:func:`num_sequences`). Every round fills at least one length
    for good, so this ends within ``max_len - min_len + 2`` rounds.
    """
    capacity = [num_words**length for length in range(min_len, max_len + 1)]
    draws = torch.randint(len(capacity), (total,), generator=generator)  # [total]
    counts = torch.bincount(draws, minlength=len(capacity)).tolist()
    while overflow := sum(max(0, c - cap) for c, cap in zip(counts, capacity, strict=True)):
        counts = [min(c, cap) for c, cap in zip(counts, capacity, strict=True)]
        room = [i for i, (c, cap) in enumerate(zip(counts, capacity, strict=True)) if c < cap]
        draws = torch.randint(len(room), (overflow,), generator=generator)
        for i, extra in zip(room, torch.bincount(draws, minlength=len(room)).tolist(), strict=True):
            counts[i] += extra
    return counts


def _first_occurrences(rows: torch.Tensor) -> torch.Tensor:
    """``rows [N, L]`` without repeated rows, keeping each row's first occurrence in order.

    Order matters: ``torch.unique`` sorts, and taking the first k of a sorted set would
    favour lexicographically small sequences.
    """
    _, inverse = torch.unique(rows, dim=0, return_inverse=True)  # [N]
    first = torch.full((int(inverse.max()) + 1,), len(rows), dtype=torch.long)
    first.scatter_reduce_(0, inverse, torch.arange(len(rows)), reduce="amin")
    return rows[first.sort().values]


def distinct_words(
    count: int, length: int, num_words: int, generator: torch.Generator
) -> torch.Tensor:
    """``count`` distinct uniformly random word sequences of ``length``: ``[count, length]``."""
    capacity = num_words**length
    if capacity <= 2 * count:
        # Dense: sample sequence numbers without replacement, then write them in base
        # num_words. capacity <= 2 * count keeps the permutation dataset-sized.
        numbers = torch.randperm(capacity, generator=generator)[:count]  # [count]
        place = num_words ** torch.arange(length - 1, -1, -1)  # [length]
        return numbers[:, None] // place % num_words + FIRST_CONTENT
    # Sparse: draw with replacement and drop repeats; at least half of all sequences are
    # still free, so each round keeps at least half its draws on average.
    rows = torch.empty(0, length, dtype=torch.long)
    while len(rows) < count:
        draws = torch.randint(
            num_words, (2 * (count - len(rows)) + 64, length), generator=generator
        )
        rows = _first_occurrences(torch.cat([rows, draws]))
    return rows[:count] + FIRST_CONTENT


def _padded(
    blocks: list[torch.Tensor], targets: list[torch.Tensor]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Word blocks ``[n, L]`` and their targets -> ``src``, ``tgt_in``, ``tgt_out`` rows,
    one block after the other, with EOS/BOS added and PAD after them."""
    count = sum(len(words) for words in blocks)
    width_src = max(words.shape[1] for words in blocks) + 1
    width_tgt = max(target.shape[1] for target in targets) + 1
    src = torch.full((count, width_src), PAD, dtype=torch.long)  # [N, S]
    tgt_in = torch.full((count, width_tgt), PAD, dtype=torch.long)  # [N, T]
    tgt_out = torch.full((count, width_tgt), PAD, dtype=torch.long)  # [N, T]
    start = 0
    for words, target in zip(blocks, targets, strict=True):
        n, length_src = words.shape
        length_tgt = target.shape[1]
        rows = slice(start, start + n)
        src[rows, :length_src] = words
        src[rows, length_src] = EOS
        tgt_in[rows, 0] = BOS
        tgt_in[rows, 1 : length_tgt + 1] = target
        tgt_out[rows, :length_tgt] = target
        tgt_out[rows, length_tgt] = EOS
        start += n
    return src, tgt_in, tgt_out


def generate(
    task: Task, count: int, num_words: int, min_len: int, max_len: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``count`` distinct examples in random order: ``src``, ``tgt_in``, ``tgt_out``.

    Each is ``[count, longest + 1]``, right-padded. Examples are made one length at a
    time, so the task maps a whole ``[n, L]`` block in one call.
    """
    counts = length_counts(count, num_words, min_len, max_len, generator)
    blocks = [
        distinct_words(n, length, num_words, generator)  # [n, length]
        for n, length in zip(counts, range(min_len, max_len + 1), strict=True)
        if n > 0
    ]
    src, tgt_in, tgt_out = _padded(blocks, [task(words) for words in blocks])
    order = torch.randperm(count, generator=generator)  # [N]
    return src[order], tgt_in[order], tgt_out[order]
