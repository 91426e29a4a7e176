"""``data=pairs``: your own source/target pairs from files, through a tokenizer learnt from
the training file.

What a run reads, and when:

- **Checked before any folder exists.** Constructing the datamodule reads and checks every
  file, learns the tokenizer(s) and tokenizes every pair (:func:`read`), so that a bad file
  is one error line naming the file and line before the run starts (the configuration
  check builds the datamodule first). The result is cached by the files' identity (path,
  size, modification time) and the settings, so the check and the run read a file once:
  for a 100,000-line file of short sentences about a second in all (BPE learnt in Rust).
- **The tokenizer travels with the run.** The learnt tokenizers' JSON become the settings
  ``src_tokenizer_json`` and ``tgt_tokenizer_json``, which Lightning saves into every
  checkpoint, so evaluation, generation and a resume rebuild them from the checkpoint
  alone; given those, the constructor reads nothing (``tlab-generate`` needs no file at
  all), and the files are read when the splits are first needed.
- **Found from any folder, and the same files.** A fresh start records each file by its
  absolute path and the sha256 of its content (``file_sha256``, saved in every checkpoint
  with the other settings), so evaluate finds the files from any working folder, a moved
  file is given again at its new place (``data.train_path=...``), and a file whose content
  changed since is refused in one line naming it and both hashes before anything is read
  from it (:func:`check_unchanged`). A resume reads the files as they are now (and records
  them anew): it may train on more data, with the checkpoint's tokenizer. A test file
  that evaluate is given (``data.test_path``) is another test set, not checked
  (:meth:`changed_settings`).
- **Held out.** Without ``val_path``/``test_path``, ``val_size`` and ``test_size`` pairs are
  cut from the training file by a seeded shuffle, and the tokenizer learns from the rest.
  Val or test pairs that also occur in training are counted and logged as a warning
  (a leak, but your data's).
- **Batches of similar lengths** (``length_buckets``, :mod:`.buckets`): text lengths vary
  widely, and a random batch pads each row to its longest. Measured on a character-level
  cipher of 2 to 5 words (batch 32, the default model, one CPU thread): padding 34% of the
  positions -> 2%, 75 -> 50 ms a training step; on BPE tokens of 3 to 7 words, 25% -> 3%.
- **Every pair fits the model.** A pair whose source or target needs more positions than
  the model has (``model_positions``: the job passes the model's ``max_len``, it is no
  setting of ``conf/data/pairs.yaml``) is refused with the count and the fix, or left out
  with ``long_pairs=skip``.
"""

import hashlib
import logging
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import ClassVar

import torch
from lightning.fabric.utilities.data import AttributeDict

from transformer_lab.config.validation import (
    InvalidSetting,
    check_choice,
    check_flag,
    check_integer,
)
from transformer_lab.data.buckets import LengthBuckets
from transformer_lab.data.examples import TextSplit, longest_sequence
from transformer_lab.data.pair_files import Pair, file_format, read_pairs
from transformer_lab.data.sampler import EpochShuffle
from transformer_lab.data.serving import SplitsDataModule
from transformer_lab.data.streams import python_random
from transformer_lab.data.tokenizer import KINDS, TokenizerCodec, train_tokenizer
from transformer_lab.tokens import FIRST_CONTENT

log = logging.getLogger(__name__)
SPLITS = ("train", "val", "test")
LONG_PAIRS = ("error", "skip")


@dataclass(frozen=True)
class Read:
    """What :func:`read` made of the files: the pairs of each split (those that fit), their
    token ids, the tokenizers' JSON, and what it left out or found twice."""

    pairs: dict[str, list[Pair]]
    ids: dict[str, tuple[list[list[int]], list[list[int]]]]  # split -> (sources, targets)
    src_json: str
    tgt_json: str
    skipped: dict[str, int]  # split -> pairs longer than the model's positions, left out
    in_train: dict[str, int]  # val/test -> pairs that also occur in train


class PairsDataModule(SplitsDataModule):
    """Train/val/test splits of source/target pairs read from TSV or JSONL files.

    ``format``: ``tsv`` or ``jsonl`` (None: by each file's extension, see
    :mod:`.pair_files`). ``tokenizer``: ``char``, ``word`` or ``bpe`` (:mod:`.tokenizer`),
    of ``vocab_size`` ids at most; one vocabulary for sources and targets unless
    ``shared_vocab`` is false. ``src_tokenizer_json``/``tgt_tokenizer_json``: None for a
    fresh start, which learns them; a checkpoint's to rebuild its run. ``file_sha256``:
    ``{"train_path": <sha256 of its content>, ...}``, None for a fresh start, which records
    them (and the files by their absolute paths); a checkpoint's to check the files against.
    ``model_positions``: the model's ``max_len``, given by the job (job/build.py). The split
    settings are :class:`~.split_settings.SplitSettings`': ``train_size`` takes at most that
    many training pairs (null: all); ``val_size``/``test_size`` are cut from the training
    file where no ``val_path``/``test_path`` is given.
    """

    learned_settings = ("src_tokenizer_json", "tgt_tokenizer_json")
    reports_text = True
    # another test file; a larger test_size would cut into the training pairs
    evaluation_settings = ("test_path",)
    # the run's own files, given again where they moved to (their content checked)
    file_settings = ("train_path", "val_path")
    split_defaults: ClassVar[dict[str, int | None]] = {"train_size": None, "test_size": 500}
    fits_model_positions = True

    def __init__(
        self,
        train_path: str,
        val_path: str | None = None,
        test_path: str | None = None,
        format: str | None = None,
        tokenizer: str = "bpe",
        vocab_size: int | None = 1000,
        shared_vocab: bool = True,
        model_positions: int = 64,
        long_pairs: str = "error",
        length_buckets: bool = True,
        src_tokenizer_json: str | None = None,
        tgt_tokenizer_json: str | None = None,
        file_sha256: dict[str, str] | None = None,
        **splits,
    ):
        super().__init__()
        self.save_hyperparameters(logger=False)
        self.save_split_settings(splits, fixed_set=True)
        _check_settings(self.hparams)
        if src_tokenizer_json is None:  # a fresh start: read everything now, learn tokenizers
            self.hparams.src_tokenizer_json = self._read.src_json
            self.hparams.tgt_tokenizer_json = self._read.tgt_json
        if file_sha256 is None:  # a fresh start (or a checkpoint from before they were kept)
            self.hparams.file_sha256 = dict(_file_hashes(self.hparams)) or None
        for key in _file_keys(self.hparams):  # found again from any working folder
            if Path(self.hparams[key]).is_file():
                self.hparams[key] = str(Path(self.hparams[key]).resolve())
        self.src_codec = TokenizerCodec.from_json(self.hparams.src_tokenizer_json)
        self.tgt_codec = (
            self.src_codec
            if self.hparams.tgt_tokenizer_json == self.hparams.src_tokenizer_json
            else TokenizerCodec.from_json(self.hparams.tgt_tokenizer_json)
        )

    def changed_settings(self, changes: dict) -> dict:
        """The settings of this data with ``changes`` (evaluate's): a test file given anew is
        another test set, whose content nothing recorded."""
        settings = dict(self.hparams) | changes
        if "test_path" in changes and settings["file_sha256"]:
            settings["file_sha256"] = {
                k: v for k, v in settings["file_sha256"].items() if k != "test_path"
            }
        return settings

    @cached_property
    def _read(self) -> Read:
        hp = self.hparams
        check_unchanged(hp)
        files = tuple(_identity(hp, name) for name in SPLITS)
        return read(
            files,
            hp.tokenizer,
            hp.vocab_size,
            hp.shared_vocab,
            hp.train_size,
            hp.val_size,
            hp.test_size,
            hp.model_positions,
            hp.long_pairs,
            hp.seed,
            hp.src_tokenizer_json,
            hp.tgt_tokenizer_json,
        )

    @property
    def max_seq_len(self) -> int:
        return max(longest_sequence(*ids) for ids in self._read.ids.values())

    def setup(self, stage: str | None = None) -> None:
        """Tensors of every split, once; a warning for pairs left out or seen in training."""
        if self._splits is not None:
            return
        data = self._read
        for split, count in data.skipped.items():
            log.warning(
                "data: left out %d %s pairs longer than the model's %d positions "
                "(data.long_pairs=skip)",
                count,
                split,
                self.hparams.model_positions,
            )
        for split, count in data.in_train.items():
            log.warning(
                "data: %d of the %d %s pairs also occur in the training pairs (same source "
                "and target): their %s metrics measure recall, not generalisation",
                count,
                len(data.pairs[split]),
                split,
                split,
            )
        self._splits = {
            name: TextSplit(name, *data.ids[name], [pair.target for pair in data.pairs[name]])
            for name in SPLITS
        }

    def _train_sampler(self, train: TextSplit) -> EpochShuffle:
        """Batches of similar lengths (:mod:`.buckets`), unless ``length_buckets`` is off."""
        if not self.hparams.length_buckets:
            return super()._train_sampler(train)
        lengths = torch.maximum(train.src_len, train.tgt_len)  # [N]
        return LengthBuckets(lengths, self.batch_size, self.hparams.seed, *self._ranks())

    def references(self, split: str, rows: list[int]) -> list[str]:
        references = self.splits[split].references
        return [references[row] for row in rows]

    def save_tokenizers(self, folder: Path) -> list[Path]:
        """``tokenizer.json`` (shared vocabulary) or ``tokenizer_source.json`` and
        ``tokenizer_target.json`` in ``folder``: files ``tokenizers.Tokenizer.from_file``
        reads."""
        if self.src_codec is self.tgt_codec:
            named = {"tokenizer.json": self.src_codec}
        else:
            named = {
                "tokenizer_source.json": self.src_codec,
                "tokenizer_target.json": self.tgt_codec,
            }
        paths = []
        for name, codec in named.items():
            (folder / name).write_text(codec.to_json())
            paths.append(folder / name)
        return paths


def _check_settings(hp: AttributeDict) -> None:
    if not isinstance(hp.train_path, str) or not hp.train_path:
        raise InvalidSetting("train_path", hp.train_path, "not a path", "a TSV or JSONL file")
    for name in ("val_path", "test_path"):
        if hp[name] is not None and (not isinstance(hp[name], str) or not hp[name]):
            raise InvalidSetting(name, hp[name], "not a path", "a TSV or JSONL file, or null")
    for name in SPLITS:
        if hp[f"{name}_path"] is not None:
            file_format(f"{name}_path", hp[f"{name}_path"], hp.format)
    check_choice("tokenizer", hp.tokenizer, KINDS)
    if hp.vocab_size is not None or hp.tokenizer == "bpe":
        # the four specials and at least one learnt token
        check_integer("vocab_size", hp.vocab_size, minimum=FIRST_CONTENT + 2)
    check_flag("shared_vocab", hp.shared_vocab)
    check_integer("test_size", hp.test_size, minimum=1)  # cut from the training file
    check_integer("model_positions", hp.model_positions, minimum=2)
    check_choice("long_pairs", hp.long_pairs, LONG_PAIRS)
    check_flag("length_buckets", hp.length_buckets)
    given = [hp.src_tokenizer_json is not None, hp.tgt_tokenizer_json is not None]
    if given[0] != given[1]:
        raise InvalidSetting(
            "tgt_tokenizer_json" if given[0] else "src_tokenizer_json",
            None if given[0] else "...",
            "given without the other tokenizer",
            "both (a checkpoint's) or neither (a fresh start learns them)",
        )


def _file_keys(hp: AttributeDict) -> list[str]:
    """The settings that name a file: ``train_path``, and ``val_path``/``test_path`` if set."""
    return [f"{split}_path" for split in SPLITS if hp[f"{split}_path"] is not None]


def sha256_of(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _file_hashes(hp: AttributeDict):
    """``(setting, sha256)`` of each file the settings name and that exists."""
    for key in _file_keys(hp):
        if Path(hp[key]).is_file():
            yield key, sha256_of(hp[key])


def check_unchanged(hp: AttributeDict) -> None:
    """InvalidSetting for a file that is gone from the path the run recorded, or whose
    content is not what the run read (its sha256)."""
    recorded = hp.file_sha256 or {}
    for key in _file_keys(hp):
        if key not in recorded:
            continue
        if not Path(hp[key]).is_file():
            raise InvalidSetting(
                key,
                hp[key],
                "no such file (the run's, by the absolute path it recorded)",
                f"the same file where it is now: data.{key}=<file>",
            )
        now = sha256_of(hp[key])
        if now != recorded[key]:
            raise InvalidSetting(
                key,
                hp[key],
                f"its content changed since the run read it (sha256 {recorded[key]} then, "
                f"{now} now)",
                "the file the run read, unchanged, or a new run",
            )


def _identity(hp: AttributeDict, split: str) -> tuple | None:
    """``(key, path, format, size, mtime)`` of the split's file, or None: what the cache of
    :func:`read` keys on, so that a changed file is read again."""
    path = hp[f"{split}_path"]
    if path is None:
        return None
    key, format = f"{split}_path", file_format(f"{split}_path", path, hp.format)
    stat = Path(path).stat() if Path(path).is_file() else None
    return key, path, format, stat and stat.st_size, stat and stat.st_mtime_ns


@lru_cache(maxsize=4)
def read(
    files: tuple,
    tokenizer: str,
    vocab_size: int | None,
    shared_vocab: bool,
    train_size: int | None,
    val_size: int,
    test_size: int,
    model_positions: int,
    long_pairs: str,
    seed: int,
    src_json: str | None,
    tgt_json: str | None,
) -> Read:
    """Read and check the files, cut the held-out splits, keep at most ``train_size``
    training pairs (None: all), learn (or take) the tokenizers, tokenize, and keep or refuse
    the pairs that exceed the model's positions."""
    train_file, val_file, test_file = files
    pairs = {
        split: read_pairs(*file[:3]) for split, file in zip(SPLITS, files, strict=True) if file
    }
    source_of = {split: file[:2] for split, file in zip(SPLITS, files, strict=True) if file}
    pairs |= _held_out(
        pairs.pop("train"),
        train_file[:2],
        val_file is None,
        test_file is None,
        val_size,
        test_size,
        seed,
    )
    for split in SPLITS:
        source_of.setdefault(split, train_file[:2])  # cut from the training file
    pairs["train"] = pairs["train"][:train_size]  # a slice to None: all of them
    if src_json is None:
        src_codec, tgt_codec = _learn(pairs["train"], tokenizer, vocab_size, shared_vocab)
    else:
        src_codec = TokenizerCodec.from_json(src_json)
        tgt_codec = src_codec if tgt_json == src_json else TokenizerCodec.from_json(tgt_json)
    ids, skipped = {}, {}
    for split in SPLITS:
        sources = src_codec.encode_batch([pair.source for pair in pairs[split]])
        targets = tgt_codec.encode_batch([pair.target for pair in pairs[split]])
        fits = [
            max(len(s), len(t)) + 1 <= model_positions
            for s, t in zip(sources, targets, strict=True)
        ]
        if not all(fits):
            _refuse_long(
                split,
                source_of[split],
                pairs[split],
                sources,
                targets,
                fits,
                model_positions,
                long_pairs,
            )
            skipped[split] = fits.count(False)
            pairs[split] = [pair for pair, fit in zip(pairs[split], fits, strict=True) if fit]
            sources = [s for s, fit in zip(sources, fits, strict=True) if fit]
            targets = [t for t, fit in zip(targets, fits, strict=True) if fit]
        ids[split] = (sources, targets)
    seen = {(pair.source, pair.target) for pair in pairs["train"]}
    in_train = {
        split: count
        for split in ("val", "test")
        if (count := sum((pair.source, pair.target) in seen for pair in pairs[split]))
    }
    return Read(pairs, ids, src_codec.to_json(), tgt_codec.to_json(), skipped, in_train)


def _held_out(train, file, cut_val, cut_test, val_size, test_size, seed) -> dict[str, list[Pair]]:
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
            f"leave none of the {len(train)} pairs of {file[0]}={file[1]!r} to train on",
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
    sources = [pair.source for pair in train]
    targets = [pair.target for pair in train]
    if shared:
        codec = TokenizerCodec(train_tokenizer(kind, sources + targets, vocab_size))
        return codec, codec
    return (
        TokenizerCodec(train_tokenizer(kind, sources, vocab_size)),
        TokenizerCodec(train_tokenizer(kind, targets, vocab_size)),
    )


def _refuse_long(split, file, pairs, sources, targets, fits, model_positions, long_pairs) -> None:
    """InvalidSetting for the pairs of ``split`` that do not fit, unless they may be skipped."""
    too_long = [i for i, fit in enumerate(fits) if not fit]
    if long_pairs == "skip":
        if len(too_long) == len(pairs):
            raise InvalidSetting(
                file[0],
                file[1],
                f"none of its {len(pairs)} {split} pairs fits the model's "
                f"{model_positions} positions",
                "model.max_len above the longest pair",
            )
        return
    needed = max(max(len(sources[i]), len(targets[i])) + 1 for i in too_long)
    first = too_long[0]
    raise InvalidSetting(
        file[0],
        file[1],
        f"{len(too_long)} of its {len(pairs)} {split} pairs need more than the model's "
        f"{model_positions} positions (the first at line {pairs[first].line}: "
        f"{len(sources[first])} source and {len(targets[first])} target tokens, plus EOS/BOS)",
        f"model.max_len >= {needed}, or data.long_pairs=skip (leaves them out)",
    )
