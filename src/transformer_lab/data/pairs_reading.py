"""What a datamodule of pairs from files makes of them, once per content (:func:`read`): the
pairs of every split, the held-out splits cut where no file gives them, the tokenizers
learnt from the training pairs, every sentence tokenized, and what does not fit the model
refused or left out.

**Memory.** A file is read one line at a time; the texts of the training pairs are
dropped once they are learnt from and tokenized, the ids are kept compactly
(:class:`~.ragged.Ragged`, 4 bytes a token) and tokenized a block of sentences at a time
(a tokenizer's ``Encoding`` objects take some 2 KB a sentence): measured with
``/usr/bin/time -v`` on a 20-step run of a 1 M-line TSV file, docs/performance.md.
Only val and test keep their texts, the references BLEU scores against.

**Lines too long to tokenize.** A sentence of more than :data:`CHARS_PER_POSITION`
characters for each of the model's positions cannot fit it with any tokenizer of the lab
in practice (a BPE token of real text is a few characters, a word a few tens), so it is
counted with the pairs too long for the model without being tokenized, nor learnt from:
learning BPE on one multi-megabyte line takes minutes.
"""

from dataclasses import dataclass
from functools import lru_cache
from itertools import chain

import numpy as np

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.data.pair_files import Pair
from transformer_lab.data.ragged import Ragged
from transformer_lab.data.split_files import SplitFiles
from transformer_lab.data.streams import python_random
from transformer_lab.data.text_lines import Cleaned
from transformer_lab.data.tokenizer import TokenizerCodec, train_tokenizer

SPLITS = ("train", "val", "test")
CHARS_PER_POSITION = 32
ENCODE_BLOCK = 10_000  # sentences tokenized at a time


@dataclass(frozen=True)
class Read:
    """What :func:`read` made of the files: each split's token ids (of the pairs that fit)
    and their lines in their file, val's and test's target texts (the references), the
    tokenizers' JSON, and what it left out, found twice or cleaned."""

    ids: dict[str, tuple[Ragged, Ragged]]  # split -> (sources, targets)
    lines: dict[str, np.ndarray]  # split -> [N] line of each pair in its file
    references: dict[str, list[str]]  # val/test -> the targets as the file wrote them
    src_json: str
    tgt_json: str
    skipped: dict[str, int]  # split -> pairs longer than the model's positions, left out
    in_train: dict[str, int]  # val/test -> pairs that also occur in train
    cleaned: dict[str, Cleaned]  # file -> its lines whose control characters were cleaned

    def size(self, split: str) -> int:
        return len(self.lines[split])


def held_out_seed(files: tuple[tuple | None, ...], seed: int) -> int | None:
    """The seed :func:`read` shuffles the training file with, for its cache key: ``seed``
    where a split has no file (``files``, as :func:`read` takes them) and is cut from the
    training file, None where every split has one (Multi30k), so that a seed sweep's jobs
    share one read of the files."""
    return seed if None in files[1:] else None


@lru_cache(maxsize=4)
def read(
    files: tuple[tuple | None, ...],
    caps: tuple[int | None, ...],
    held_out: tuple[int, int],
    tokenizer: str,
    vocab_size: int | None,
    shared_vocab: bool,
    model_positions: int,
    long_pairs: str,
    seed: int | None,
    src_json: str | None,
    tgt_json: str | None,
) -> Read:
    """Read and check the files (``files``: each split's :meth:`.SplitFiles.identity`, None
    where the split is cut from the training file), cut the held-out splits of ``held_out``
    (val_size, test_size) pairs by a shuffle of ``seed``, keep at most ``caps`` (train, val,
    test; None: all) pairs of each split (the first, in the file's order), learn (or take)
    the tokenizers, tokenize, and keep or refuse the pairs that exceed the model's
    positions; ``seed`` is None where no split is cut (:func:`held_out_seed`)."""
    given = {split: file[0] for split, file in zip(SPLITS, files, strict=True) if file}
    train_files: SplitFiles = given["train"]
    pairs, cleaned = {}, {}
    for split, split_files in given.items():
        file_read = split_files.read()
        pairs[split] = file_read.pairs
        cleaned |= file_read.cleaned
    origin = {split: given.get(split, train_files) for split in SPLITS}
    cut = (split not in given for split in ("val", "test"))
    pairs |= _held_out(pairs.pop("train"), train_files, *cut, *held_out, seed)
    for split, cap in zip(SPLITS, caps, strict=True):
        pairs[split] = pairs[split][:cap]  # a slice to None: all of them
    limit = model_positions * CHARS_PER_POSITION
    too_long = {split: _longer_than(pairs[split], limit) for split in SPLITS}
    if src_json is None:
        train = zip(pairs["train"], too_long["train"], strict=True)
        learnt_from = [pair for pair, long in train if not long]
        src_codec, tgt_codec = _learn(learnt_from, tokenizer, vocab_size, shared_vocab)
    else:
        src_codec = TokenizerCodec.from_json(src_json)
        tgt_codec = src_codec if tgt_json == src_json else TokenizerCodec.from_json(tgt_json)
    ids, lines, skipped = {}, {}, {}
    for split in SPLITS:
        sources = _encoded(src_codec, [p.source for p in pairs[split]], too_long[split])
        targets = _encoded(tgt_codec, [p.target for p in pairs[split]], too_long[split])
        fits = np.maximum(sources.lengths, targets.lengths) + 1 <= model_positions  # [N]
        fits &= ~too_long[split]
        if not fits.all():
            refuse = (split, origin[split], pairs[split], sources, targets, fits)
            _refuse_long(*refuse, model_positions, long_pairs)
            skipped[split] = int((~fits).sum())
            pairs[split] = [pair for pair, fit in zip(pairs[split], fits, strict=True) if fit]
            sources, targets = sources.where(fits), targets.where(fits)
        ids[split] = (sources, targets)
        lines[split] = np.fromiter((pair.line for pair in pairs[split]), np.int64)
    seen = {(pair.source, pair.target) for pair in pairs["train"]}
    in_train = {
        split: count
        for split in ("val", "test")
        if (count := sum((pair.source, pair.target) in seen for pair in pairs[split]))
    }
    references = {split: [pair.target for pair in pairs[split]] for split in ("val", "test")}
    cleaned = {path: count for path, count in cleaned.items() if count.lines}
    codecs = (src_codec.to_json(), tgt_codec.to_json())
    return Read(ids, lines, references, *codecs, skipped, in_train, cleaned)


def _longer_than(pairs: list[Pair], limit: int) -> np.ndarray:
    """``[N]`` whether a pair's source or target has more than ``limit`` characters."""
    return np.fromiter((max(len(p.source), len(p.target)) > limit for p in pairs), bool, len(pairs))


def _encoded(codec: TokenizerCodec, texts: list[str], skip: np.ndarray) -> Ragged:
    """The ids of ``texts``, a block at a time; a text marked in ``skip`` gets none."""
    blocks = []
    for start in range(0, len(texts), ENCODE_BLOCK):
        end = start + ENCODE_BLOCK
        block = zip(texts[start:end], skip[start:end], strict=True)
        blocks.append(Ragged.of(codec.encode_batch(["" if s else t for t, s in block])))
    return Ragged.joined(blocks)


def _held_out(
    train: list[Pair],
    files: SplitFiles,
    cut_val: bool,
    cut_test: bool,
    val_size: int,
    test_size: int,
    seed: int,
) -> dict[str, list[Pair]]:
    """``train`` and the val/test splits cut from it (where their files are not given): a
    seeded shuffle of the training file's pairs, val first, then test, then train."""
    cut = {"val": val_size if cut_val else 0, "test": test_size if cut_test else 0}
    if not any(cut.values()):
        return {"train": train}
    if sum(cut.values()) >= len(train):
        name = "val_size" if cut_val else "test_size"
        raise InvalidSetting(
            name,
            cut["val"] or cut["test"],
            f"the held-out pairs ({' + '.join(f'{k}_size={v}' for k, v in cut.items() if v)}) "
            f"leave none of the {len(train)} pairs of {files.key}={files.shown!r} to train on",
            f"val_size + test_size < {len(train)}, or data.val_path/data.test_path",
        )
    order = list(range(len(train)))
    python_random(seed, "pairs", "held_out").shuffle(order)
    val_end = cut["val"]
    test_end = val_end + cut["test"]
    split = {"train": [train[i] for i in sorted(order[test_end:])]}
    if cut_val:
        split["val"] = [train[i] for i in order[:val_end]]
    if cut_test:
        split["test"] = [train[i] for i in order[val_end:test_end]]
    return split


def _learn(train: list[Pair], kind: str, vocab_size: int | None, shared: bool):
    """The source and target codecs learnt from the training pairs (one, if ``shared``)."""

    def sources():
        return (pair.source for pair in train)

    def targets():
        return (pair.target for pair in train)

    if shared:  # every source, then every target
        codec = TokenizerCodec(train_tokenizer(kind, chain(sources(), targets()), vocab_size))
        return codec, codec
    return (
        TokenizerCodec(train_tokenizer(kind, sources(), vocab_size)),
        TokenizerCodec(train_tokenizer(kind, targets(), vocab_size)),
    )


def _refuse_long(
    split: str,
    files: SplitFiles,
    pairs: list[Pair],
    sources: Ragged,
    targets: Ragged,
    fits: np.ndarray,
    model_positions: int,
    long_pairs: str,
) -> None:
    """InvalidSetting for the pairs of ``split`` that do not fit, unless they may be skipped."""
    if long_pairs == "skip":
        if not fits.any():
            raise InvalidSetting(
                files.key,
                files.shown,
                f"none of its {len(pairs)} {split} pairs fits the model's "
                f"{model_positions} positions",
                "model.max_len above the longest pair",
            )
        return
    too_long = np.flatnonzero(~fits)
    first = int(too_long[0])
    limit = model_positions * CHARS_PER_POSITION
    tokens = np.maximum(sources.lengths, targets.lengths)[too_long]  # 0: not tokenized
    chars = [max(len(pairs[i].source), len(pairs[i].target)) for i in too_long]
    at_least = zip(tokens, chars, strict=True)  # a character-long pair: a lower bound
    needed = max(max(int(t), -(-c // CHARS_PER_POSITION)) + 1 for t, c in at_least)
    if chars[0] > limit:
        what = (
            f"{chars[0]:,} characters, more than the {limit:,} ({CHARS_PER_POSITION} a "
            "position) any tokenizer fits in them"
        )
    else:
        what = (
            f"{sources.lengths[first]} source and {targets.lengths[first]} target tokens, "
            "plus EOS/BOS"
        )
    raise InvalidSetting(
        files.key,
        files.shown,
        f"{len(too_long)} of its {len(pairs)} {split} pairs need more than the model's "
        f"{model_positions} positions (the first at line {pairs[first].line}: {what})",
        f"model.max_len >= {needed}, or data.long_pairs=skip (leaves them out)",
    )
