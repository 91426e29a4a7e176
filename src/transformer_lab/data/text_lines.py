"""The lines of a data file as the field ships corpora (UTF-8 text, plain or gzip-compressed,
one record a line), read one at a time, and the rule for the control characters real text
carries.

Real text is not clean: Multi30k's German training file has a tab inside the sentence of
line 7,366; files written on Windows end their lines in ``\\r\\n`` and may start with a
byte-order mark; scraped text holds stray control characters. What each becomes, the same
for every file the lab reads as data (pairs, parallel files):

- ``\\r\\n`` reads as ``\\n``, and a byte-order mark at the start of the file is dropped:
  both are how a file is written, not what it says.
- Bytes that are not UTF-8 are refused (:class:`InvalidSetting` naming the file, the line
  and the byte): a file in another encoding is wrong as a whole, and replacing what cannot
  be read would train the model on replacement characters.
- A control character inside a sentence (:func:`clean`): one that separates words (tab,
  vertical tab, form feed, a lone carriage return, the information separators, NEL, the
  Unicode line and paragraph separators) reads as a space, with the spaces around it as
  one; any other (NUL and the rest of C0, DEL, C1, a byte-order mark inside the file) is
  dropped: it prints as nothing, and a tokenizer would learn it as a symbol. The lines so
  changed are counted (:class:`Cleaned`), and the datamodule logs the count and the first
  line as a warning: nothing changes silently.

Reading holds one line at a time (a 1 M-line file is never held twice), so the caller
decides what to keep.
"""

import gzip
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from transformer_lab.config.validation import InvalidSetting, one_line

COMPRESSED = ".gz"
# word separators among the control characters: each reads as a space
SEPARATING = "\t\v\f\r\x1c\x1d\x1e\x1f\x85\u2028\u2029"
_SEPARATORS = re.compile(f" *[{SEPARATING}][ {SEPARATING}]*")
# the other control characters (C0, DEL, C1) and a byte-order mark inside the file: dropped
_INVISIBLE = re.compile("[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\ufeff]")
_ANY_CONTROL = re.compile(f"[{SEPARATING}\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\ufeff]")


@dataclass
class Cleaned:
    """How many lines of one file :func:`clean` changed, and the first of them."""

    lines: int = 0
    first_line: int | None = None

    def count(self, number: int) -> None:
        self.lines += 1
        if self.first_line is None:
            self.first_line = number


def clean(text: str) -> str:
    """``text`` with its control characters read as the module says: word separators as one
    space, the others dropped; the rest of the text as it was."""
    if not _ANY_CONTROL.search(text):  # the common case: nothing to do
        return text
    return _INVISIBLE.sub("", _SEPARATORS.sub(" ", text))


def is_compressed(path: str) -> bool:
    return Path(path).suffix.lower() == COMPRESSED


def lines(key: str, path: str, allowed: str) -> Iterator[tuple[int, str]]:
    """``(number, text)`` of every line of the file ``path`` (numbered from 1; gzip when it
    ends in ``.gz``), decoded, without its line end; InvalidSetting(``key``, ...) for a
    missing file or bytes that are not UTF-8, ``allowed`` saying what the file should be."""
    if not Path(path).is_file():
        raise InvalidSetting(key, path, "no such file", allowed)
    compressed = is_compressed(path)
    try:
        with (gzip.open if compressed else open)(path, "rb") as file:
            for number, raw in enumerate(file, start=1):
                yield number, _decoded(key, path, number, raw)
    except (OSError, EOFError, zlib.error) as error:  # unreadable, or a damaged gzip
        kind = "as gzip (it ends in .gz)" if compressed else "as a file"
        reason = f"cannot be read {kind}: {one_line(error) or type(error).__name__}"
        raise InvalidSetting(key, path, reason, allowed) from None


def _decoded(key: str, path: str, number: int, raw: bytes) -> str:
    """One line's bytes as text: its ``\\n`` or ``\\r\\n`` cut, a byte-order mark at the
    file's start dropped."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InvalidSetting(
            key,
            path,
            f"line {number} is not UTF-8 (byte 0x{raw[error.start]:02x} at byte "
            f"{error.start + 1} of the line)",
            "a file in UTF-8",
        ) from None
    text = text.removesuffix("\n").removesuffix("\r")
    return text.removeprefix("\ufeff") if number == 1 else text


def lines_of(data: bytes) -> list[str]:
    """The lines of ``data`` given whole (a file of inputs to translate, standard input),
    as :func:`lines` reads a file's, except that bytes that are not UTF-8 read as U+FFFD:
    a line of someone's own is decoded anyway, and what a tokenizer never saw is reported
    with it. Only ``\\n`` ends a line (``str.splitlines`` would also split at the
    control characters :func:`clean` reads as spaces, and number the lines otherwise)."""
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    pieces = text.split("\n")
    if pieces[-1] == "":  # the newline that ends the last line
        pieces.pop()
    return [piece.removesuffix("\r") for piece in pieces]
