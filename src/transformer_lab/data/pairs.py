"""``data=pairs``: your own source/target pairs from files, through a tokenizer learnt from
the training file. A split is one file of pairs (TSV or JSONL, :mod:`.pair_files`), or,
with ``src_lang`` and ``tgt_lang`` set, two parallel files, one sentence a line
(:mod:`.parallel_files`): ``train_path=corpus/train src_lang=de tgt_lang=en`` reads
``corpus/train.de`` and ``corpus/train.en`` (each plain or ``.gz``), as fairseq's prefix
and language flags do. A prefix rather than two paths a split: one setting per split, as
for a file of pairs, so that everything that names a split's file (held-out cuts,
evaluate's ``data.test_path=``, a moved file given again) works for both, and corpora are
shipped so (Multi30k, WMT, IWSLT: ``<split>.<lang>[.gz]``).

What a run reads, and when:

- **Checked before any folder exists.** Constructing the datamodule reads and checks every
  file, learns the tokenizer(s) and tokenizes every pair (:func:`read`), so that a bad file
  is one error line naming the file and line before the run starts (the configuration
  check builds the datamodule first). The result is cached by the files' identity (path,
  size, modification time) and the settings, so the check and the run read a file once:
  for a 100,000-line file of short sentences about a second in all (BPE learnt in Rust).
  How it is read, and held compactly: :mod:`.pairs_reading`.
- **The tokenizer travels with the run.** The learnt tokenizers' JSON become the settings
  ``src_tokenizer_json`` and ``tgt_tokenizer_json``, which Lightning saves into every
  checkpoint, so evaluation, generation and a resume rebuild them from the checkpoint
  alone; given those, the constructor reads nothing (``tlab-generate`` needs no file at
  all), and the files are read when the splits are first needed.
- **Found from any folder, and the same files.** A fresh start records each file by its
  absolute path and the sha256 of its content (``file_sha256``: ``{setting: sha256}``,
  ``{setting: {language: sha256}}`` for parallel files; saved in every checkpoint
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

import logging
from functools import cached_property
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
from transformer_lab.data.examples import TextSplit, padded
from transformer_lab.data.pair_files import file_format
from transformer_lab.data.pairs_reading import SPLITS, Read, read
from transformer_lab.data.parallel_files import LANGUAGE
from transformer_lab.data.sampler import EpochShuffle
from transformer_lab.data.serving import SplitsDataModule
from transformer_lab.data.split import Split
from transformer_lab.data.split_files import PARALLEL, SplitFiles
from transformer_lab.data.tokenizer import KINDS, TokenizerCodec
from transformer_lab.tokens import FIRST_CONTENT

log = logging.getLogger(__name__)
LONG_PAIRS = ("error", "skip")


class PairsDataModule(SplitsDataModule):
    """Train/val/test splits of source/target pairs read from files: TSV or JSONL, or
    parallel files.

    ``format``: ``tsv`` or ``jsonl`` (None: by each file's extension, see
    :mod:`.pair_files`). ``src_lang``/``tgt_lang``: both None for files of pairs; both set,
    each ``*_path`` is the prefix of two parallel files ``<path>.<lang>[.gz]``.
    ``tokenizer``: ``char``, ``word`` or ``bpe`` (:mod:`.tokenizer`),
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
        src_lang: str | None = None,
        tgt_lang: str | None = None,
        tokenizer: str = "bpe",
        vocab_size: int | None = 1000,
        shared_vocab: bool = True,
        model_positions: int = 64,
        long_pairs: str = "error",
        length_buckets: bool = True,
        src_tokenizer_json: str | None = None,
        tgt_tokenizer_json: str | None = None,
        file_sha256: dict | None = None,
        **splits,
    ):
        super().__init__()
        self.save_hyperparameters(logger=False)
        self.save_split_settings(splits, fixed_set=True)
        _check_paths(self.hparams)
        check_integer("test_size", self.hparams.test_size, minimum=1)  # cut from train
        self._build()

    def _build(self) -> None:
        """Check the settings every data of pairs shares; on a fresh start read the files
        and learn the tokenizers; record the files (absolute paths, content); the codecs."""
        check_tokenizing(self.hparams)
        hp = self.hparams
        if hp.src_tokenizer_json is None:  # a fresh start: read everything now, learn tokenizers
            hp.src_tokenizer_json = self._read.src_json
            hp.tgt_tokenizer_json = self._read.tgt_json
        self.record_files()
        self.src_codec = TokenizerCodec.from_json(hp.src_tokenizer_json)
        self.tgt_codec = (
            self.src_codec
            if hp.tgt_tokenizer_json == hp.src_tokenizer_json
            else TokenizerCodec.from_json(hp.tgt_tokenizer_json)
        )

    # -- where the splits are, and what a run records of them --------------------------------

    def split_files(self) -> dict[str, SplitFiles | None]:
        """Each split's files; None for a split cut from the training file."""
        hp = self.hparams
        languages = (hp.src_lang, hp.tgt_lang) if hp.src_lang is not None else None
        files = {}
        for split in SPLITS:
            key = f"{split}_path"
            if hp[key] is None:
                files[split] = None
            elif languages:
                files[split] = SplitFiles(key, hp[key], PARALLEL, languages)
            else:
                files[split] = SplitFiles(key, hp[key], file_format(key, hp[key], hp.format))
        return files

    def size_caps(self) -> tuple[int | None, ...]:
        """At most how many pairs of train, val and test are kept (None: all)."""
        return self.hparams.train_size, None, None

    def record_files(self) -> None:
        """A fresh start records each file's content (``file_sha256``), and every file
        setting as an absolute path, so that it is found again from any working folder."""
        hp = self.hparams
        given = [files for files in self.split_files().values() if files and files.exist()]
        if hp.file_sha256 is None:  # a fresh start (or a checkpoint from before they were kept)
            hp.file_sha256 = {files.key: files.sha256() for files in given} or None
        for files in given:
            hp[files.key] = str(Path(hp[files.key]).resolve())

    def check_files(self) -> None:
        """InvalidSetting for a file that is gone from the path the run recorded, or whose
        content is not what the run read (its sha256)."""
        recorded = self.hparams.file_sha256 or {}
        for files in self.split_files().values():
            if files is None or files.key not in recorded:
                continue
            if not files.exist():
                raise InvalidSetting(
                    files.key,
                    files.path,
                    "no such file (the run's, by the absolute path it recorded)",
                    f"the same file where it is now: data.{files.key}=<file>",
                )
            now = files.sha256()
            if now != recorded[files.key]:
                raise InvalidSetting(
                    files.key,
                    files.path,
                    f"its content changed since the run read it (sha256 "
                    f"{recorded[files.key]} then, {now} now)",
                    "the file the run read, unchanged, or a new run",
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

    # -- the splits ------------------------------------------------------------------------

    @cached_property
    def _read(self) -> Read:
        hp = self.hparams
        self.check_files()
        files = tuple(f and f.identity() for f in self.split_files().values())
        return read(
            files,
            self.size_caps(),
            (hp.val_size, hp.test_size),
            hp.tokenizer,
            hp.vocab_size,
            hp.shared_vocab,
            hp.model_positions,
            hp.long_pairs,
            hp.seed,
            hp.src_tokenizer_json,
            hp.tgt_tokenizer_json,
        )

    @property
    def max_seq_len(self) -> int:
        """The longest ``src``/``tgt_in``/``tgt_out`` of any split (EOS/BOS included)."""
        ids = self._read.ids.values()
        return max(max(sources.longest(), targets.longest()) for sources, targets in ids) + 1

    def setup(self, stage: str | None = None) -> None:
        """Tensors of every split, once; a warning for pairs left out, seen in training, or
        cleaned of control characters."""
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
                data.size(split),
                split,
                split,
            )
        for path, cleaned in data.cleaned.items():
            log.warning(
                "data: %s: %d lines held control characters, read as spaces (tab and the "
                "like) or dropped (the others), the first at line %d",
                path,
                cleaned.lines,
                cleaned.first_line,
            )
        train = Split("train", *padded(*data.ids["train"]))  # no texts: BLEU scores val, test
        self._splits = {"train": train} | {
            name: TextSplit(name, *data.ids[name], data.references[name]) for name in SPLITS[1:]
        }

    def _train_sampler(self, train: Split) -> EpochShuffle:
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


def _check_paths(hp: AttributeDict) -> None:
    """InvalidSetting for the first path or language setting of ``data=pairs`` that cannot
    name files."""
    parallel = hp.src_lang is not None or hp.tgt_lang is not None
    kind = "the prefix of two parallel files" if parallel else "a TSV or JSONL file"
    if not isinstance(hp.train_path, str) or not hp.train_path:
        raise InvalidSetting("train_path", hp.train_path, "not a path", kind)
    for name in ("val_path", "test_path"):
        if hp[name] is not None and (not isinstance(hp[name], str) or not hp[name]):
            raise InvalidSetting(name, hp[name], "not a path", f"{kind}, or null")
    if parallel:
        check_languages(hp.src_lang, hp.tgt_lang)
        if hp.format is not None:
            raise InvalidSetting(
                "format",
                hp.format,
                "a format of files of pairs, but src_lang/tgt_lang name parallel files",
                "null with src_lang/tgt_lang (one sentence a line), or no languages",
            )
        return
    for name in SPLITS:
        if hp[f"{name}_path"] is not None:
            file_format(f"{name}_path", hp[f"{name}_path"], hp.format)


def check_languages(src_lang, tgt_lang, choices: tuple[str, ...] | None = None) -> None:
    """InvalidSetting unless both languages are given, are codes (among ``choices`` where
    given) and differ."""
    for name, value, other in (("src_lang", src_lang, tgt_lang), ("tgt_lang", tgt_lang, src_lang)):
        if choices is not None:
            check_choice(name, value, choices)
        elif value is None:
            given = "src_lang" if name == "tgt_lang" else "tgt_lang"
            raise InvalidSetting(
                name, None, f"missing, but {given}={other!r} is set", "both languages, or neither"
            )
        elif not isinstance(value, str) or not LANGUAGE.fullmatch(value):
            raise InvalidSetting(
                name, value, "not a language code", "a code as file names end: de, en, pt_br"
            )
    if src_lang == tgt_lang:
        raise InvalidSetting("tgt_lang", tgt_lang, "the same as src_lang", "another language")


def check_tokenizing(hp: AttributeDict) -> None:
    """InvalidSetting for the first setting of the tokenizer, the held-out cut or the fit to
    the model that cannot work."""
    check_choice("tokenizer", hp.tokenizer, KINDS)
    if hp.vocab_size is not None or hp.tokenizer == "bpe":
        # the four specials and at least one learnt token
        check_integer("vocab_size", hp.vocab_size, minimum=FIRST_CONTENT + 2)
    check_flag("shared_vocab", hp.shared_vocab)
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
