"""``data=multi30k``: Multi30k task 1 (Elliott et al., 2016) by name: 29,000 training, 1,014
validation and 1,000 test (``test_2016_flickr``) image captions, each in German, English and
French, translated from ``src_lang`` to ``tgt_lang`` (German to English by default).

The corpus's raw files (``train.de.gz``, ...: :data:`~.corpora.MULTI30K`) are read from the
data folder ``data_dir``, which ``python -m transformer_lab.data.fetch multi30k`` fills
(:mod:`.fetch`): parallel files (:mod:`.parallel_files`), so real text's quirks (German
line 7,366's tab) read as the sentences they are. Everything else is ``data=pairs``': a
tokenizer learnt from the training pairs (by default one BPE vocabulary of 8,000 for both
languages), kept in the checkpoint; what does not fit the model refused or left out.

- **The published files, or none.** Before a run reads them, each file is checked against
  its pinned SHA-256: a missing folder or file, or one that is not the published file, is
  one line naming it and how to get the right one, before anything is learnt. So a run
  records nothing of the files (no ``file_sha256``): their content is the corpus's.
- **Splits are the corpus's.** ``train_size``, ``val_size``, ``test_size`` keep at most
  that many pairs of each split, the first in the file (null: all; ``val_size`` is a
  number, 1,014 by default): a smaller ``val_size`` makes the validations during training
  cheaper, and the test is the whole ``test_2016_flickr`` unless ``test_size`` says less.
- **Found again.** The folder is recorded by its absolute path; evaluate on a machine
  where it lies elsewhere is given ``data.data_dir=<folder>``.
"""

from pathlib import Path
from typing import ClassVar

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.data.corpora import MULTI30K
from transformer_lab.data.pairs_reading import SPLITS
from transformer_lab.data.split_files import PARALLEL, SplitFiles, sha256_of
from transformer_lab.data.text_pairs import TextPairsDataModule, check_languages

FETCH = "python -m transformer_lab.data.fetch multi30k"


class Multi30kDataModule(TextPairsDataModule):
    """Multi30k's train / val / test_2016_flickr in ``src_lang`` -> ``tgt_lang`` (de, en,
    fr), read from ``data_dir``; the tokenizer settings and ``model_positions`` as
    :class:`~.pairs.PairsDataModule`'s (:mod:`.text_pairs`)."""

    corpus = MULTI30K
    evaluation_settings = ()
    file_settings = ("data_dir",)
    split_defaults: ClassVar[dict[str, int | None]] = {
        "train_size": None,
        "val_size": 1014,
        "test_size": None,
    }

    def __init__(
        self,
        data_dir: str,
        src_lang: str = "de",
        tgt_lang: str = "en",
        tokenizer: str = "bpe",
        vocab_size: int | None = 8000,
        shared_vocab: bool = True,
        model_positions: int = 64,
        long_pairs: str = "error",
        length_buckets: bool = True,
        src_tokenizer_json: str | None = None,
        tgt_tokenizer_json: str | None = None,
        **splits,
    ):
        super().__init__()
        self.save_hyperparameters(logger=False)
        self.save_split_settings(splits, fixed_set=True)
        if not isinstance(data_dir, str) or not data_dir:
            raise InvalidSetting("data_dir", data_dir, "not a path", "a folder")
        check_languages(src_lang, tgt_lang, self.corpus.languages)
        self._build()

    def split_files(self) -> dict[str, SplitFiles | None]:
        hp = self.hparams
        return {
            split: SplitFiles(
                "data_dir",
                str(Path(hp.data_dir) / self.corpus.splits[split]),
                PARALLEL,
                (hp.src_lang, hp.tgt_lang),
                value=hp.data_dir,
            )
            for split in SPLITS
        }

    def size_caps(self) -> tuple[int | None, ...]:
        hp = self.hparams
        return hp.train_size, hp.val_size, hp.test_size

    def record_files(self) -> None:
        """The folder by its absolute path, where it exists."""
        if Path(self.hparams.data_dir).is_dir():
            self.hparams.data_dir = str(Path(self.hparams.data_dir).resolve())

    def check_files(self) -> None:
        """InvalidSetting naming the first file this run reads that is missing or not the
        corpus's published file (its pinned SHA-256)."""
        folder = self.hparams.data_dir
        if not Path(folder).is_dir():
            raise InvalidSetting(
                "data_dir",
                folder,
                "no such folder",
                f"a folder of Multi30k's files: {FETCH} downloads them into "
                "${paths.data_root}/multi30k (docs/multi30k.md: by hand, without a network)",
            )
        for split in SPLITS:
            for lang in (self.hparams.src_lang, self.hparams.tgt_lang):
                name = self.corpus.file_name(split, lang)
                path = Path(folder) / name
                if not path.is_file():
                    reason = f"no {name} in it"
                elif (digest := sha256_of(str(path))) != self.corpus.sha256[name]:
                    reason = (
                        f"its {name} is not Multi30k's published file (sha256 {digest}, "
                        f"pinned {self.corpus.sha256[name]})"
                    )
                else:
                    continue
                raise InvalidSetting(
                    "data_dir",
                    folder,
                    reason,
                    f"the files {FETCH} puts there, or copies of them (docs/multi30k.md)",
                )
