"""Source/target pairs read from a file, TSV or JSONL: each bad line refused by its number.

A TSV line is ``source<TAB>target``; a JSONL line is ``{"source": "...", "target": "..."}``
(other keys are ignored). Surrounding whitespace of a source or target is dropped, and so
are blank lines; a line ending in ``\\r\\n`` reads as one ending in ``\\n``. Everything else
that cannot be a pair is an :class:`~transformer_lab.config.validation.InvalidSetting` of
the setting that named the file (``train_path``, ...), worded with the line:
``train_path='data/train.tsv': line 17 has no tab between source and target; allowed: ...``.
Reading is pure Python, a pass over the bytes: about 0.1 s for 100,000 lines.
"""

import json
from dataclasses import dataclass
from pathlib import Path

from transformer_lab.config.validation import InvalidSetting, check_choice

FORMATS = ("tsv", "jsonl")
EXTENSIONS = {".tsv": "tsv", ".txt": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
ALLOWED = {
    "tsv": "one source<TAB>target pair a line (TSV)",
    "jsonl": 'one {"source": ..., "target": ...} object a line (JSONL)',
}


@dataclass(frozen=True)
class Pair:
    """One example of a file: its line number (from 1), source and target text."""

    line: int
    source: str
    target: str


def file_format(key: str, path: str, format: str | None) -> str:
    """``format`` when given, else the one the extension of ``path`` names."""
    if format is not None:
        check_choice("format", format, FORMATS)
        return format
    suffix = Path(path).suffix.lower()
    if suffix not in EXTENSIONS:
        raise InvalidSetting(
            key,
            path,
            f"its extension {suffix or '(none)'!r} does not tell TSV from JSONL",
            f"a file ending in {', '.join(EXTENSIONS)}, or data.format=tsv|jsonl",
        )
    return EXTENSIONS[suffix]


def _fields(text: str, format: str) -> tuple[str, str] | str:
    """``(source, target)`` of one line, or what is wrong with it."""
    if format == "tsv":
        fields = text.split("\t")
        if len(fields) == 1:
            return "has no tab between source and target"
        if len(fields) > 2:
            return f"has {len(fields) - 1} tabs, not one between source and target"
        return fields[0], fields[1]
    try:
        record = json.loads(text)
    except json.JSONDecodeError as error:
        return f"is not valid JSON ({error.msg} at column {error.colno})"
    if not isinstance(record, dict):
        return f"is a JSON {type(record).__name__}, not an object"
    for name in ("source", "target"):
        if name not in record:
            return f'has no "{name}"'
        if not isinstance(record[name], str):
            return f'has a "{name}" that is not a string'
    return record["source"], record["target"]


def read_pairs(key: str, path: str, format: str) -> list[Pair]:
    """Every pair of the file ``path`` in ``format``, or InvalidSetting(``key``, ...) for
    the first line that is not one (or for a missing or empty file)."""
    file = Path(path)
    if not file.is_file():
        raise InvalidSetting(key, path, "no such file", "an existing TSV or JSONL file of pairs")
    data = file.read_bytes()
    if not data:
        raise InvalidSetting(key, path, "the file is empty", ALLOWED[format])
    lines = data.split(b"\n")
    pairs = []
    for number, raw in enumerate(lines, start=1):
        try:
            text = raw.decode("utf-8").removesuffix("\r")
        except UnicodeDecodeError as error:
            raise InvalidSetting(
                key,
                path,
                f"line {number} is not UTF-8 (byte 0x{raw[error.start]:02x} at byte "
                f"{error.start + 1} of the line)",
                "a file in UTF-8",
            ) from None
        if number == 1:
            text = text.removeprefix("\ufeff")  # a byte-order mark
        if not text.strip():
            continue
        fields = _fields(text, format)
        if isinstance(fields, str):
            raise InvalidSetting(key, path, f"line {number} {fields}", ALLOWED[format])
        source, target = (field.strip() for field in fields)
        for name, value in (("source", source), ("target", target)):
            if not value:
                raise InvalidSetting(
                    key,
                    path,
                    f"line {number} has an empty {name}",
                    f"{ALLOWED[format]}, both non-empty",
                )
        pairs.append(Pair(number, source, target))
    if not pairs:
        raise InvalidSetting(key, path, "the file holds no pairs", ALLOWED[format])
    return pairs
