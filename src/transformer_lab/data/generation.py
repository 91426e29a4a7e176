"""Distinct random examples of a task, as padded tensors: the pure part of the data.

One example, for source words ``w`` and target ``t = task(w)`` (all content ids)::

    src     = w + [EOS]            # what the encoder reads
    tgt_in  = [BOS] + t            # what the decoder reads (teacher forcing)
    tgt_out = t + [EOS]            # what the decoder must predict at each position

so ``tgt_in[i + 1] == tgt_out[i]``; rows are right-padded with ``PAD`` and the loss
ignores ``PAD`` labels.

Every source of one call is distinct, and none repeats a source it is told to exclude,
which is what lets the data module draw held-out splits one after the other. Examples are
made one length at a time with a handful of tensor ops, so tens of thousands cost well
under a second. Nothing here knows Lightning.
"""

from collections.abc import Callable, Sequence

import torch

from transformer_lab.tokens import BOS, EOS, FIRST_CONTENT, PAD

Task = Callable[[torch.Tensor], torch.Tensor]


def num_sequences(num_words: int, shortest: int, longest: int) -> int:
    """How many distinct word sequences have a length in ``shortest..longest``."""
    return sum(num_words**length for length in range(shortest, longest + 1))


def length_counts(
    total: int,
    num_words: int,
    shortest: int,
    longest: int,
    generator: torch.Generator,
    taken: Sequence[int] = (),
) -> list[int]:
    """How many examples of each length ``shortest..longest``: uniform draws.

    ``taken[i]`` sequences of length ``shortest + i`` are excluded (held by other splits),
    so that length has room for ``num_words ** length - taken[i]``. A length with less room
    than its uniform share (13 content ids at length 3 give 13**3 = 2197) is used up
    entirely and its overflow is drawn uniformly over the lengths that still have room.
    Needs ``total`` <= the room of all lengths together. Every round fills at least one
    length for good, so this ends within ``longest - shortest + 2`` rounds.
    """
    lengths = range(shortest, longest + 1)
    taken = list(taken) or [0] * len(lengths)
    capacity = [num_words**length - t for length, t in zip(lengths, taken, strict=True)]
    draws = torch.randint(len(capacity), (total,), generator=generator)  # [total]
    counts = torch.bincount(draws, minlength=len(capacity)).tolist()
    while overflow := sum(max(0, c - cap) for c, cap in zip(counts, capacity, strict=True)):
        counts = [min(c, cap) for c, cap in zip(counts, capacity, strict=True)]
        room = [i for i, (c, cap) in enumerate(zip(counts, capacity, strict=True)) if c < cap]
        draws = torch.randint(len(room), (overflow,), generator=generator)
        for i, extra in zip(room, torch.bincount(draws, minlength=len(room)).tolist(), strict=True):
            counts[i] += extra
    return counts


def _place_values(num_words: int, length: int) -> torch.Tensor:
    """What each of ``length`` digits is worth in base ``num_words``, first digit first: ``[L]``."""
    return num_words ** torch.arange(length - 1, -1, -1)


def _keys(rows: torch.Tensor, num_words: int) -> torch.Tensor:
    """What tells rows ``[N, L]`` of word ids ``0..num_words - 1`` apart: their numbers in
    base ``num_words`` ``[N]`` where those fit 63 bits (a 1-D ``torch.unique`` is some 20x
    faster than one over rows), else the rows themselves (``paper_base``: 7997**8 > 2**63)."""
    length = rows.shape[1]
    if num_words**length > 2**63 - 1:
        return rows
    return (rows * _place_values(num_words, length)).sum(dim=1)  # [N]


def _first_occurrences(keys: torch.Tensor) -> torch.Tensor:
    """Where each distinct key of ``keys`` (``[N]`` or rows ``[N, L]``) first occurs: ``[K]``
    indices in increasing order.

    Order matters: ``torch.unique`` sorts, and taking the first k of a sorted set would
    favour lexicographically small sequences.
    """
    _, inverse = torch.unique(keys, return_inverse=True, dim=0 if keys.dim() > 1 else None)
    first = torch.full((int(inverse.max()) + 1,), len(keys), dtype=torch.long)
    first.scatter_reduce_(0, inverse, torch.arange(len(keys)), reduce="amin")
    return first.sort().values


def distinct_words(
    count: int,
    length: int,
    num_words: int,
    generator: torch.Generator,
    exclude: torch.Tensor | None = None,
) -> torch.Tensor:
    """``count`` distinct uniformly random word sequences of ``length``: ``[count, length]``,
    none of them a row of ``exclude`` (``[M, length]``, distinct content ids as returned
    here: the sequences other splits hold)."""
    taken = torch.empty(0, length, dtype=torch.long) if exclude is None else exclude - FIRST_CONTENT
    capacity = num_words**length
    if capacity <= 2 * (count + len(taken)):
        # Dense: sample the free sequence numbers without replacement, then write them in
        # base num_words. The bound keeps the permutation dataset-sized.
        numbers = torch.randperm(capacity, generator=generator)  # [capacity]
        numbers = numbers[~torch.isin(numbers, _keys(taken, num_words))][:count]  # [count]
        return numbers[:, None] // _place_values(num_words, length) % num_words + FIRST_CONTENT
    # Sparse: draw with replacement and drop the taken rows with the repeats (the taken
    # rows come first, so the first occurrences of the draws are the new ones). At least
    # half of all sequences are still free, so each round keeps at least half its draws
    # on average.
    rows = taken
    while len(rows) < len(taken) + count:
        draws = torch.randint(
            num_words, (2 * (len(taken) + count - len(rows)) + 64, length), generator=generator
        )
        rows = torch.cat([rows, draws])
        rows = rows[_first_occurrences(_keys(rows, num_words))]
    return rows[len(taken) : len(taken) + count] + FIRST_CONTENT


def _sources_by_length(exclude: Sequence[torch.Tensor], lengths: range) -> list[torch.Tensor]:
    """The words ``[M, length]`` of the sources of each of ``lengths`` among the ``src``
    rows of ``exclude``."""
    taken = {length: [torch.empty(0, length, dtype=torch.long)] for length in lengths}
    for src in exclude:
        words = (src != PAD).sum(dim=1) - 1  # [N]: the EOS is the last real token
        for length in lengths:
            if src.shape[1] > length:  # a narrower block holds no source this long
                taken[length].append(src[words == length, :length])
    return [torch.cat(blocks) for blocks in taken.values()]


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
    task: Task,
    count: int,
    num_words: int,
    shortest: int,
    longest: int,
    generator: torch.Generator,
    exclude: Sequence[torch.Tensor] = (),
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``count`` distinct examples in random order: ``src``, ``tgt_in``, ``tgt_out``.

    ``src`` is ``[count, longest + 1]``, the targets as wide as the longest target the task
    makes and EOS (BOS), all right-padded. No source repeats one of ``exclude``,
    the ``src`` rows of earlier calls (any width, as returned here): that is how the data
    module draws a split disjoint from the ones before it. Examples are made one length at
    a time, so the task maps a whole ``[n, L]`` block in one call.
    """
    lengths = range(shortest, longest + 1)
    taken = _sources_by_length(exclude, lengths)
    counts = length_counts(
        count, num_words, shortest, longest, generator, [len(words) for words in taken]
    )
    blocks = [
        distinct_words(n, length, num_words, generator, words)  # [n, length]
        for n, length, words in zip(counts, lengths, taken, strict=True)
        if n > 0
    ]
    src, tgt_in, tgt_out = _padded(blocks, [task(words) for words in blocks])
    order = torch.randperm(count, generator=generator)  # [N]
    return src[order], tgt_in[order], tgt_out[order]
