"""What generate reads of its input, before any model runs: standard input as bytes, decoded
as a file of inputs is (bytes that are not UTF-8 as U+FFFD, never a traceback), each line
read as the training files were (a tab a space) and through the run's tokenizer, what it
never saw named, and a line too long for the model refused without tokenizing it."""

import io

import pytest

from transformer_lab.data.tokenizer import TokenizerCodec, train_tokenizer
from transformer_lab.generate import encoded, read_lines

BYTES = b"\xef\xbb\xbfein Hund\r\ncaf\xe9 und Kuchen\nzwei\tHunde"


@pytest.fixture(scope="module")
def codec():
    texts = ["ein hund läuft", "zwei Hunde spielen", "Kuchen und Kaffee"] * 20
    return TokenizerCodec(train_tokenizer("bpe", texts, 60))


def test_stdin_bytes_are_decoded_as_a_files_are(monkeypatch, tmp_path):
    (tmp_path / "inputs.txt").write_bytes(BYTES)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(BYTES), encoding="utf-8"))
    expected = ["ein Hund", "caf\ufffd und Kuchen", "zwei\tHunde"]
    assert read_lines("-") == read_lines(str(tmp_path / "inputs.txt")) == expected


def test_a_line_reads_as_the_training_files_did_and_what_is_unseen_is_named(codec):
    first, second, third = encoded(["ein Hund", "caf\ufffd und Kuchen", "zwei\tHunde"], codec, 64)
    assert third.ids == codec.encode("zwei Hunde")  # the tab reads as a space
    assert second.unseen == ["\ufffd"] and second.ids and not second.error
    assert first.unseen == [] and first.ids == codec.encode("ein Hund")


def test_a_line_longer_than_any_model_position_holds_is_refused_untokenized(codec):
    (line,) = encoded(["x" * (8 * 32 + 1)], codec, 8)
    assert line.error == "257 characters, more than the model's 8 positions hold (32 a position)"
    assert line.ids is None
