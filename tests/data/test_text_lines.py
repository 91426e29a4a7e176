"""The lines of a data file and the rule for control characters: CRLF and a BOM are how a file
is written (gone), word-separating controls read as one space, the other controls are
dropped, and bytes that are not UTF-8 are refused by their line."""

import gzip

import pytest

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.data.text_lines import clean, lines


def test_crlf_and_a_leading_bom_are_dropped_a_lone_cr_is_kept_for_the_cleaning(tmp_path):
    path = tmp_path / "f.txt"
    path.write_bytes(b"\xef\xbb\xbfone\r\ntwo\rhalf\nthree")
    assert list(lines("k", str(path), "text")) == [(1, "one"), (2, "two\rhalf"), (3, "three")]


def test_a_gzip_file_gives_the_same_lines(tmp_path):
    path = tmp_path / "f.txt.gz"
    path.write_bytes(gzip.compress(b"eins\nzwei\n"))
    assert list(lines("k", str(path), "text")) == [(1, "eins"), (2, "zwei")]


@pytest.mark.parametrize(
    ("text", "cleaned"),
    [
        ("plain text, untouched  (two spaces kept)", "plain text, untouched  (two spaces kept)"),
        ("einer \tWasserfontäne", "einer Wasserfontäne"),  # Multi30k de line 7,366
        ("a\vb\fc\rd\x1fe\x85f\u2028g\u2029h", "a b c d e f g h"),
        ("nul\x00 del\x7f c1\x9b bom\ufeff bell\x07", "nul del c1 bom bell"),
        ("zero\u200bwidth and é, ß, 漢字 stay", "zero\u200bwidth and é, ß, 漢字 stay"),
    ],
)
def test_control_characters_read_as_one_space_or_nothing(text, cleaned):
    assert clean(text) == cleaned


def test_a_missing_file_names_what_it_should_be(tmp_path):
    with pytest.raises(InvalidSetting, match=r"k='.*nowhere': no such file; allowed: a file"):
        list(lines("k", str(tmp_path / "nowhere"), "a file"))


def test_a_line_that_is_not_utf8_names_its_byte(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("ok\nStraße\n".encode("latin-1"))
    with pytest.raises(InvalidSetting, match=r"line 2 is not UTF-8 \(byte 0xdf at byte 5 of"):
        list(lines("k", str(path), "text"))
