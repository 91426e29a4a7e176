"""Source/target pairs read from a file, TSV or JSONL (plain, or gzip when the name ends in
``.gz``): each bad line refused by its number.

A TSV line is ``source<TAB>target``; a JSONL line is ``{"source": "...", "target": "..."}``
(other keys are ignored). Surrounding whitespace of a source or target is dropped, and so
are blank lines; line ends, a byte-order mark, bytes that are not UTF-8 and control
characters inside a source or target are :mod:`.text_lines`' business. Everything else
that cannot be a pair is an :class:`~transformer_lab.config.validation.InvalidSetting` of
the setting that named the file (``train_path``, ...), worded with the line:
``train_path='data/train.tsv': line 17 has no tab between source and target; allowed: ...``.
Reading is pure Python, one line at a time: about 0.1 s for 100,000 lines.
"""

import json
from dataclasses import dataclass
from pathlib import Path

from transformer_lab.config.validation import InvalidSetting, check_choice
from transformer_lab.data.text_lines import COMPRESSED, Cleaned, clean, is_compressed, lines

FORMATS = ("tsv", "jsonl")
EXTENSIONS = {".tsv": "tsv", ".txt": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
ALLOWED = {
    "tsv": "one source<TAB>target pair a line (TSV)",
    "jsonl": 'one {"source": ..., "target": ...} object a line (JSONL)',
}


@dataclass(frozen=True, slots=True)
class Pair:
    """One example of a file: its line number (from 1), source and target text."""

    line: int
    source: str
    target: str


@dataclass
class FileRead:
    """The pairs of one file (or of two parallel ones) and, for each file, the lines whose
    control characters were cleaned (:func:`~.text_lines.clean`)."""

    pairs: list[Pair]
    cleaned: dict[str, Cleaned]


def file_format(key: str, path: str, format: str | None) -> str:
    """``format`` when given, else the one the extension of ``path`` names."""
    if format is not None:
        check_choice("format", format, FORMATS)
        return format
    name = Path(path.removesuffix(COMPRESSED) if is_compressed(path) else path)
    suffix = name.suffix.lower()
    if suffix not in EXTENSIONS:
        raise InvalidSetting(
            key,
            path,
            f"its extension {suffix or '(none)'!r} does not tell TSV from JSONL",
            f"a file ending in {', '.join(EXTENSIONS)} (or that and .gz), or data.format=tsv|jsonl",
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


def read_pairs(key: str, path: str, format: str) -> FileRead:
    """Every pair of the file ``path`` in ``format``, or InvalidSetting(``key``, ...) for
    the first line that is not one (or for a missing or empty file)."""
    cleaned = Cleaned()
    read = FileRead([], {path: cleaned})
    for number, text in lines(key, path, "an existing TSV or JSONL file of pairs"):
        if not text.strip():
            continue
        fields = _fields(text, format)
        if isinstance(fields, str):
            raise InvalidSetting(key, path, f"line {number} {fields}", ALLOWED[format])
        source, target = (clean(field).strip() for field in fields)
        if source != fields[0].strip() or target != fields[1].strip():
            cleaned.count(number)
        for name, value in (("source", source), ("target", target)):
            if not value:
                raise InvalidSetting(
                    key,
                    path,
                    f"line {number} has an empty {name}",
                    f"{ALLOWED[format]}, both non-empty",
                )
        read.pairs.append(Pair(number, source, target))
    if not read.pairs:
        empty = not is_compressed(path) and Path(path).stat().st_size == 0
        reason = "the file is empty" if empty else "the file holds no pairs"
        raise InvalidSetting(key, path, reason, ALLOWED[format])
    return read
