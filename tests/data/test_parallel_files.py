"""Parallel files, one sentence a line, named by a prefix and two languages: what aligned files
give (plain or gzip, a tab inside a sentence a space, lines blank on both sides skipped), and
the one line each way two files can fail to be pairs gets, naming the file and the line."""

import gzip

import pytest

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.data.pair_files import Pair
from transformer_lab.data.parallel_files import read_parallel
from transformer_lab.data.text_lines import Cleaned

LANGUAGES = ("de", "en")


def write(tmp_path, name: str, text: str, packed: bool = False) -> str:
    path = tmp_path / (name + (".gz" if packed else ""))
    data = text.encode()
    path.write_bytes(gzip.compress(data) if packed else data)
    return str(path)


def test_aligned_files_give_pairs_numbered_by_line(tmp_path):
    write(tmp_path, "train.de", "Ein Hund.\nZwei\tKatzen.\n\nDrei Vögel.\n")
    write(tmp_path, "train.en", "A dog.\nTwo cats.\n\nThree birds.\n", packed=True)
    read = read_parallel("train_path", str(tmp_path / "train"), LANGUAGES)
    assert read.pairs == [
        Pair(1, "Ein Hund.", "A dog."),
        Pair(2, "Zwei Katzen.", "Two cats."),  # a tab inside a sentence reads as a space
        Pair(4, "Drei Vögel.", "Three birds."),  # line 3, blank on both sides: skipped
    ]
    assert read.cleaned == {
        str(tmp_path / "train.de"): Cleaned(lines=1, first_line=2),
        str(tmp_path / "train.en.gz"): Cleaned(),
    }


def test_the_languages_choose_the_direction(tmp_path):
    write(tmp_path, "t.de", "Hund\n")
    write(tmp_path, "t.en", "dog\n")
    assert read_parallel("k", str(tmp_path / "t"), ("en", "de")).pairs == [Pair(1, "dog", "Hund")]


def refusal(tmp_path, de: str | None, en: str | None, **packed) -> str:
    if de is not None:
        write(tmp_path, "train.de", de, packed.get("de", False))
    if en is not None:
        write(tmp_path, "train.en", en, packed.get("en", False))
    with pytest.raises(InvalidSetting) as refused:
        read_parallel("train_path", str(tmp_path / "train"), LANGUAGES)
    return str(refused.value.within("data"))


def test_line_counts_that_differ_are_refused_with_both_counts(tmp_path):
    prefix = tmp_path / "train"
    message = refusal(tmp_path, "a\nb\nc\n", "x\ny\n")
    assert message == (
        f"data.train_path={str(prefix)!r}: {prefix}.en has 2 lines, {prefix}.de 3: not aligned "
        f"line by line; allowed: two files {prefix}.de and {prefix}.en, aligned line by line "
        "(one sentence a line; plain or .gz)"
    )


def test_a_longer_target_file_is_refused_the_same_way(tmp_path):
    prefix = tmp_path / "train"
    message = refusal(tmp_path, "a\n", "x\ny\nz\n")
    assert f": {prefix}.de has 1 line, {prefix}.en 3: not aligned line by line;" in message


def test_a_line_empty_on_one_side_is_refused_naming_it(tmp_path):
    prefix = tmp_path / "train"
    message = refusal(tmp_path, "a\nb\n", "x\n \t\n")
    assert f": line 2 of {prefix}.en is empty, but not line 2 of {prefix}.de;" in message


def test_a_missing_language_file_is_refused_naming_both_names_looked_for(tmp_path):
    prefix = tmp_path / "train"
    message = refusal(tmp_path, "a\n", None)
    assert f": no file {prefix}.en (nor {prefix}.en.gz); allowed: two files" in message


def test_a_plain_file_beside_its_gzip_is_refused_as_ambiguous(tmp_path):
    prefix = tmp_path / "train"
    write(tmp_path, "train.de", "a\n", packed=True)
    message = refusal(tmp_path, "a\n", "x\n")
    assert f": both {prefix}.de and {prefix}.de.gz exist: which one is meant;" in message


def test_bytes_that_are_not_utf8_are_refused_naming_the_file_and_line(tmp_path):
    (tmp_path / "train.de").write_bytes(b"gut\ncaf\xe9\n")
    write(tmp_path, "train.en", "good\ncafe\n")
    with pytest.raises(InvalidSetting) as refused:
        read_parallel("train_path", str(tmp_path / "train"), LANGUAGES)
    assert str(refused.value) == (
        f"train_path={str(tmp_path / 'train.de')!r}: line 2 is not UTF-8 (byte 0xe9 at byte 4 "
        f"of the line); allowed: a file in UTF-8"
    )
