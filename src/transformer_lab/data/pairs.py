"""``data=pairs``: your own source/target pairs from files, through a tokenizer learnt from
the training file. A split is one file of pairs (TSV or JSONL, :mod:`.pair_files`), or,
with ``src_lang`` and ``tgt_lang`` set, two parallel files, one sentence a line
(:mod:`.parallel_files`): ``train_path=corpus/train src_lang=de tgt_lang=en`` reads
``corpus/train.de`` and ``corpus/train.en`` (each plain or ``.gz``), as fairseq's prefix
and language flags do. A prefix rather than two paths a split: one setting per split, as
for a file of pairs, so that everything that names a split's file (held-out cuts,
evaluate's ``data.test_path=``, a moved file given again) works for both, and corpora are
shipped so (Multi30k, WMT, IWSLT: ``<split>.<lang>[.gz]``).

What a run reads, and when, is :mod:`.text_pairs`'; what is this data's own:

- **Found from any folder, and the same files.** A fresh start records each file by its
  absolute path and the sha256 of its content (``file_sha256``: ``{setting: sha256}``,
  ``{setting: {language: sha256}}`` for parallel files; saved in every checkpoint
  with the other settings), so evaluate finds the files from any working folder, a moved
  file is given again at its new place (``data.train_path=...``), and a file whose content
  changed since is refused in one line naming it and both hashes before anything is read
  from it (:meth:`PairsDataModule.check_files`). A resume reads the files as they are now
  (and records them anew): it may train on more data, with the checkpoint's tokenizer. A
  test file
  that evaluate is given (``data.test_path``) is another test set, not checked
  (:meth:`changed_settings`).
- **Held out.** Without ``val_path``/``test_path``, ``val_size`` and ``test_size`` pairs are
  cut from the training file by a seeded shuffle, and the tokenizer learns from the rest.
  Val or test pairs that also occur in training are counted and logged as a warning
  (a leak, but your data's).
"""

from pathlib import Path
from typing import ClassVar

from lightning.fabric.utilities.data import AttributeDict

from transformer_lab.config.validation import InvalidSetting, check_integer
from transformer_lab.data.pair_files import file_format
from transformer_lab.data.pairs_reading import SPLITS
from transformer_lab.data.split_files import PARALLEL, SplitFiles
from transformer_lab.data.text_pairs import TextPairsDataModule, check_languages


class PairsDataModule(TextPairsDataModule):
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

    # another test file; a larger test_size would cut into the training pairs
    evaluation_settings = ("test_path",)
    # the run's own files, given again where they moved to (their content checked)
    file_settings = ("train_path", "val_path")
    split_defaults: ClassVar[dict[str, int | None]] = {"train_size": None, "test_size": 500}

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

    def split_files(self) -> dict[str, SplitFiles | None]:
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
