"""``data=multi30k``: the corpus by name, its splits read from the data folder as published
(pinned SHA-256), in any direction among de, en and fr; what is missing or not the published
file is one line naming it and how to fetch it. Small stand-in files (pinned to their own
hashes) check the behaviour; the real copy (slow, skipped where absent) checks the corpus."""

import dataclasses
import gzip
import hashlib
import logging

import pytest

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.data.corpora import MULTI30K
from transformer_lab.data.multi30k import Multi30kDataModule

from ..real_corpora import MULTI30K as MULTI30K_COPY
from ..real_corpora import needs_multi30k

SENTENCES = {
    "de": ["ein hund läuft", "zwei katzen schlafen", "ein kind spielt", "drei vögel singen"],
    "en": ["a dog runs", "two cats sleep", "a child plays", "three birds sing"],
    "fr": ["un chien court", "deux chats dorment", "un enfant joue", "trois oiseaux chantent"],
}
LINES = {"train": 40, "val": 6, "test_2016_flickr": 5}


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A stand-in Multi30k folder (line i of every file: sentence i % 4 and the number i),
    and the corpus pinned to its files' hashes."""
    digests, folder = {}, tmp_path / "multi30k"
    folder.mkdir()
    for stem, count in LINES.items():
        for lang, sentences in SENTENCES.items():
            text = "".join(f"{sentences[i % 4]} {i}\n" for i in range(count)).encode()
            data = gzip.compress(text, mtime=0)
            (folder / f"{stem}.{lang}.gz").write_bytes(data)
            digests[f"{stem}.{lang}.gz"] = hashlib.sha256(data).hexdigest()
    monkeypatch.setattr(Multi30kDataModule, "corpus", dataclasses.replace(MULTI30K, sha256=digests))
    return folder


def make(folder, **settings):
    defaults = dict(tokenizer="word", vocab_size=None, batch_size=4)
    return Multi30kDataModule(str(folder), **(defaults | settings))


def test_german_to_english_by_default_with_the_corpus_splits(folder):
    dm = make(folder)
    assert [len(dm.splits[s]) for s in ("train", "val", "test")] == [40, 6, 5]
    assert dm.references("test", [0, 1]) == ["a dog runs 0", "two cats sleep 1"]
    source = dm.src_codec.decode(dm.splits["test"].src[1].tolist())
    assert source == "zwei katzen schlafen 1"
    assert dm.hparams.data_dir == str(folder.resolve())


def test_any_direction_among_de_en_fr(folder):
    dm = make(folder, src_lang="en", tgt_lang="fr")
    assert dm.references("val", [2]) == ["un enfant joue 2"]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"src_lang": "es"}, "src_lang='es': unknown; allowed: de, en, fr"),
        ({"tgt_lang": "de"}, "tgt_lang='de': the same as src_lang; allowed: another language"),
    ],
)
def test_a_language_the_corpus_lacks_is_refused(folder, settings, message):
    with pytest.raises(InvalidSetting) as refused:
        make(folder, **settings)
    assert str(refused.value) == message


def test_val_size_keeps_the_first_validation_pairs_and_test_stays_whole(folder):
    dm = make(folder, val_size=2)
    assert dm.references("val", [0, 1]) == ["a dog runs 0", "two cats sleep 1"]
    assert (len(dm.splits["val"]), len(dm.splits["test"])) == (2, 5)


def test_a_missing_folder_names_the_fetch_command(tmp_path):
    with pytest.raises(InvalidSetting) as refused:
        make(tmp_path / "nowhere")
    assert str(refused.value.within("data")) == (
        f"data.data_dir={str(tmp_path / 'nowhere')!r}: no such folder; allowed: a folder of "
        "Multi30k's files: python -m transformer_lab.data.fetch multi30k downloads them into "
        "${paths.data_root}/multi30k (docs/multi30k.md: by hand, without a network)"
    )


def test_a_missing_or_changed_file_is_refused_naming_it(folder):
    (folder / "val.en.gz").unlink()
    with pytest.raises(InvalidSetting, match=r"no val\.en\.gz in it; allowed: the files python"):
        make(folder)
    (folder / "train.de.gz").write_bytes(gzip.compress(b"anders\n"))
    with pytest.raises(InvalidSetting, match=r"its train\.de\.gz is not Multi30k's published"):
        make(folder)


def test_the_checkpoint_settings_rebuild_the_tokenizers_without_the_folder(folder, tmp_path):
    settings = dict(make(folder).hparams)
    moved = tmp_path / "moved"
    folder.rename(moved)
    again = Multi30kDataModule(**settings)  # what generate does: no file read
    assert again.src_codec.encode("ein hund") == make(moved).src_codec.encode("ein hund")


@pytest.mark.slow  # the real corpus: 31,014 pairs read and BPE learnt (seconds)
@needs_multi30k
def test_the_real_corpus_reads_whole_with_german_line_7366_as_its_sentence(caplog):
    with caplog.at_level(logging.WARNING):
        dm = Multi30kDataModule(str(MULTI30K_COPY), model_positions=64, batch_size=64)
        dm.setup()
    assert [len(dm.splits[s]) for s in ("train", "val", "test")] == [29000, 1014, 1000]
    assert dm.src_vocab_size == dm.tgt_vocab_size == 8000  # one BPE vocabulary for both
    line = 7366 - 1  # its tab, inside the sentence, reads as a space
    sentence = dm.src_codec.decode(dm.splits["train"].src[line].tolist())
    assert sentence.startswith('"Zwei männliche und eine weibliche Person spielen in einer ')
    assert sentence.endswith(' Wasserfontäne."') and "\t" not in sentence
    assert f"{MULTI30K_COPY / 'train.de.gz'}: 1 lines held control characters" in caplog.text
    assert dm.references("test", [0]) == ["A man in an orange hat starring at something."]
    assert dm.max_seq_len <= 64  # the default model's positions hold every sentence


def test_a_refusal_of_the_corpus_names_the_data_folder_not_a_file_prefix(folder):
    with pytest.raises(InvalidSetting) as refused:
        make(folder, model_positions=4)
    assert str(refused.value).startswith(
        f"data_dir={str(folder)!r}: 40 of its 40 train pairs need more than the model's 4 "
        "positions (the first at line 1: "
    )
