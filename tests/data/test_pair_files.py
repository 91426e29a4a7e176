"""Reading source/target pairs from TSV and JSONL: what a good file gives, and the one message
each kind of bad line gets, naming the setting, the file and the line."""

import gzip
import json

import pytest

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.data.pair_files import Pair, file_format, read_pairs
from transformer_lab.data.text_lines import Cleaned


def write(tmp_path, name: str, content: bytes | str):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return str(path)


def test_a_tsv_gives_its_pairs_with_line_numbers_trimmed_blank_lines_skipped(tmp_path):
    path = write(tmp_path, "p.tsv", "\ufeffa b\tA B\r\n\n  c \t C\n")
    read = read_pairs("train_path", path, "tsv")
    assert read.pairs == [Pair(1, "a b", "A B"), Pair(3, "c", "C")]
    assert read.cleaned == {path: Cleaned()}  # a BOM and CRLF are how a file is written


def test_a_jsonl_gives_its_pairs_and_ignores_other_keys(tmp_path):
    lines = [{"source": "a b", "target": "x", "id": 7}, {"target": "y", "source": "c"}]
    path = write(tmp_path, "p.jsonl", "".join(json.dumps(line) + "\n" for line in lines))
    assert read_pairs("train_path", path, "jsonl").pairs == [Pair(1, "a b", "x"), Pair(2, "c", "y")]


def test_a_gzip_file_of_pairs_reads_as_the_plain_one(tmp_path):
    text = "a b\tA B\nc\tC\n"
    plain = write(tmp_path, "p.tsv", text)
    packed = write(tmp_path, "p.tsv.gz", gzip.compress(text.encode()))
    assert file_format("train_path", packed, None) == "tsv"
    assert read_pairs("k", packed, "tsv").pairs == read_pairs("k", plain, "tsv").pairs


def test_control_characters_in_a_source_or_target_are_cleaned_and_counted(tmp_path):
    lines = [
        {"source": "a\tb", "target": "x"},  # a tab inside a JSON string: a space
        {"source": "c", "target": "y"},
        {"source": "d\u0000e\u007f", "target": "z \u000b\f w"},  # NUL, DEL dropped; VT FF a space
    ]
    path = write(tmp_path, "p.jsonl", "".join(json.dumps(line) + "\n" for line in lines))
    read = read_pairs("train_path", path, "jsonl")
    assert read.pairs == [Pair(1, "a b", "x"), Pair(2, "c", "y"), Pair(3, "de", "z w")]
    assert read.cleaned == {path: Cleaned(lines=2, first_line=1)}


def test_the_format_follows_the_extension_unless_given():
    assert file_format("train_path", "a/b.TSV", None) == "tsv"
    assert file_format("train_path", "a/b.txt", None) == "tsv"
    assert file_format("train_path", "a/b.jsonl", None) == "jsonl"
    assert file_format("train_path", "a/b.csv", "jsonl") == "jsonl"


TSV = "one source<TAB>target pair a line (TSV)"
JSONL = 'one {"source": ..., "target": ...} object a line (JSONL)'
BAD = {
    "missing": (
        "nowhere.tsv",
        None,
        "no such file; allowed: an existing TSV or JSONL file of pairs",
    ),
    "empty": ("e.tsv", b"", f"the file is empty; allowed: {TSV}"),
    "only blank lines": ("b.tsv", b"\n  \n", f"the file holds no pairs; allowed: {TSV}"),
    "no tab": (
        "t.tsv",
        b"a\tb\nno tab here\n",
        f"line 2 has no tab between source and target; allowed: {TSV}",
    ),
    "two tabs": (
        "t.tsv",
        b"a\tb\tc\n",
        f"line 1 has 2 tabs, not one between source and target; allowed: {TSV}",
    ),
    "empty source": (
        "s.tsv",
        b"a\tb\n \tb\n",
        f"line 2 has an empty source; allowed: {TSV}, both non-empty",
    ),
    "empty target": (
        "s.tsv",
        b"a\t\n",
        f"line 1 has an empty target; allowed: {TSV}, both non-empty",
    ),
    "damaged gzip": (
        "d.tsv.gz",
        gzip.compress(b"a\tb\n")[:-9],
        "cannot be read as gzip (it ends in .gz): Compressed file ended before the "
        "end-of-stream marker was reached; allowed: an existing TSV or JSONL file of pairs",
    ),
    "not UTF-8": (
        "u.tsv",
        b"a\tb\ncaf\xe9\tc\n",
        "line 2 is not UTF-8 (byte 0xe9 at byte 4 of the line); allowed: a file in UTF-8",
    ),
    "invalid JSON": (
        "j.jsonl",
        b'{"source": "a", "target": "b"}\n{"source": "a" "target": "b"}\n',
        f"line 2 is not valid JSON (Expecting ',' delimiter at column 16); allowed: {JSONL}",
    ),
    "missing key": ("k.jsonl", b'{"source": "a"}\n', f'line 1 has no "target"; allowed: {JSONL}'),
    "not a string": (
        "k.jsonl",
        b'{"source": 3, "target": "b"}\n',
        f'line 1 has a "source" that is not a string; allowed: {JSONL}',
    ),
    "not an object": (
        "k.jsonl",
        b'["a", "b"]\n',
        f"line 1 is a JSON list, not an object; allowed: {JSONL}",
    ),
}


@pytest.mark.parametrize("case", BAD)
def test_each_bad_file_is_one_invalid_setting_naming_file_and_line(tmp_path, case):
    name, content, message = BAD[case]
    path = str(tmp_path / name) if content is None else write(tmp_path, name, content)
    format = "jsonl" if ".jsonl" in name else "tsv"
    with pytest.raises(InvalidSetting) as refused:
        read_pairs("test_path", path, format)
    assert str(refused.value.within("data")) == f"data.test_path={path!r}: {message}"


def test_an_extension_that_names_no_format_is_refused():
    with pytest.raises(InvalidSetting, match=r"'\.csv' does not tell TSV from JSONL"):
        file_format("train_path", "pairs.csv", None)
