"""What every datamodule of sentence pairs read from files shares (``data=pairs``,
``data=multi30k``), :class:`TextPairsDataModule`; each subclass says where its splits' files
are and how it records and checks them.

- **Checked before any folder exists.** Constructing the datamodule reads and checks every
  file, learns the tokenizer(s) and tokenizes every pair (:func:`~.pairs_reading.read`), so
  that a bad file is one error line naming the file and line before the run starts (the
  configuration check builds the datamodule first). The result is cached by the files'
  identity (path, size, modification time) and the settings, so the check and the run
  read a file once: for a 100,000-line file of short sentences about a second in all (BPE
  learnt in Rust). How it is read, and held compactly: :mod:`.pairs_reading`.
- **The tokenizer travels with the run.** The learnt tokenizers' JSON become the settings
  ``src_tokenizer_json`` and ``tgt_tokenizer_json``, which Lightning saves into every
  checkpoint, so evaluation, generation and a resume rebuild them from the checkpoint
  alone; given those, the constructor reads nothing (``tlab-generate`` needs no file at
  all), and the files are read when the splits are first needed.
- **Batches of similar lengths** (``length_buckets``, :mod:`.buckets`): text lengths vary
  widely, and a random batch pads each row to its longest. Measured on a character-level
  cipher of 2 to 5 words (batch 32, the default model, one CPU thread): padding 34% of the
  positions -> 2%, 75 -> 50 ms a training step; on BPE tokens of 3 to 7 words, 25% -> 3%.
- **Every pair fits the model.** A pair whose source or target needs more positions than
  the model has (``model_positions``: the job passes the model's ``max_len``, it is no
  setting of a data config) is refused with the count and the fix, or left out with
  ``long_pairs=skip``.
"""

import logging
from functools import cached_property
from pathlib import Path

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
from transformer_lab.data.pairs_reading import SPLITS, Read, held_out_seed, read
from transformer_lab.data.parallel_files import LANGUAGE
from transformer_lab.data.sampler import EpochShuffle
from transformer_lab.data.serving import SplitsDataModule
from transformer_lab.data.split import Split
from transformer_lab.data.split_files import SplitFiles
from transformer_lab.data.tokenizer import KINDS, TokenizerCodec
from transformer_lab.tokens import FIRST_CONTENT

log = logging.getLogger(__name__)
LONG_PAIRS = ("error", "skip")


class TextPairsDataModule(SplitsDataModule):
    """Sentence pairs from files, tokenized by what the run learns from its training pairs.

    A subclass's constructor saves its settings (``save_hyperparameters``, and
    :meth:`save_split_settings`), checks its own and calls :meth:`_build`; it says where
    each split's files are (:meth:`split_files`), how many pairs of each it keeps
    (:meth:`size_caps`), and what a run records of its files and checks again
    (:meth:`record_files`, :meth:`check_files`).
    """

    learned_settings = ("src_tokenizer_json", "tgt_tokenizer_json")
    reports_text = True
    fits_model_positions = True

    def split_files(self) -> dict[str, SplitFiles | None]:
        """Each split's files; None for a split cut from the training file."""
        raise NotImplementedError

    def size_caps(self) -> tuple[int | None, ...]:
        """At most how many pairs of train, val and test are kept (None: all)."""
        raise NotImplementedError

    def record_files(self) -> None:
        """What a fresh start records of its files, so that they are found again."""
        raise NotImplementedError

    def check_files(self) -> None:
        """InvalidSetting for files that are not what the run read, before reading them."""
        raise NotImplementedError

    def _build(self) -> None:
        """Check the settings every data of pairs shares; on a fresh start read the files
        and learn the tokenizers; record the files (:meth:`record_files`); the codecs."""
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
            held_out_seed(files, hp.seed),
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
