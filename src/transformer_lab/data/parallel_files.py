"""Parallel files, the field's way of shipping a corpus (fairseq, OpenNMT, Marian, Moses): one
file per language, one sentence a line, aligned by line. A split is named by a prefix and
the two languages, as fairseq's ``--trainpref data/train --source-lang de --target-lang
en`` names ``data/train.de`` and ``data/train.en``; each file plain or gzip
(``data/train.de.gz``), as Multi30k and WMT ship them.

Each of these is one :class:`InvalidSetting` naming the setting, the file and the line,
before anything is learnt: a missing file (neither ``<prefix>.<lang>`` nor
``<prefix>.<lang>.gz``, or both, which would leave open which was meant), line counts that
differ, and a line empty on one side only (after :func:`~.text_lines.clean`). A line empty
on both sides is skipped, as a TSV's blank line is. A tab inside a sentence is a character
of the sentence here (cleaned to a space), not a separator: Multi30k's German line 7,366
reads as the sentence it is.
"""

import re
from itertools import zip_longest
from pathlib import Path

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.data.pair_files import FileRead, Pair
from transformer_lab.data.text_lines import COMPRESSED, Cleaned, clean, lines

# a language code as corpora name their files: de, en, pt_br, zh-Hans
LANGUAGE = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
ALLOWED = "two files {}, aligned line by line (one sentence a line; plain or .gz)"


def allowed(prefix: str, languages: tuple[str, str]) -> str:
    """What the files of ``prefix`` should be, for a refusal's ``allowed``."""
    return ALLOWED.format(" and ".join(f"{prefix}.{lang}" for lang in languages))


def language_file(key: str, prefix: str, lang: str, languages: tuple[str, str]) -> str:
    """The one existing file of ``prefix`` in ``lang``: ``<prefix>.<lang>`` or its ``.gz``."""
    plain = f"{prefix}.{lang}"
    found = [path for path in (plain, plain + COMPRESSED) if Path(path).is_file()]
    if len(found) == 1:
        return found[0]
    reason = (
        f"both {found[0]} and {found[1]} exist: which one is meant"
        if found
        else f"no file {plain} (nor {plain}{COMPRESSED})"
    )
    raise InvalidSetting(key, prefix, reason, allowed(prefix, languages))


def language_files(key: str, prefix: str, languages: tuple[str, str]) -> tuple[str, str]:
    """The source and the target file of ``prefix``."""
    source, target = (language_file(key, prefix, lang, languages) for lang in languages)
    return source, target


def read_parallel(key: str, prefix: str, languages: tuple[str, str]) -> FileRead:
    """Every pair of the files of ``prefix`` in ``languages`` (source, target), numbered by
    line; InvalidSetting(``key``, ...) for the first thing that makes them no pairs."""
    paths = language_files(key, prefix, languages)
    rule = allowed(prefix, languages)
    cleaned = {path: Cleaned() for path in paths}
    read = FileRead([], cleaned)
    both = zip_longest(*(lines(key, path, rule) for path in paths))
    for number, texts in enumerate(both, start=1):
        if None in texts:  # one file has ended, the other goes on
            _refuse_unaligned(key, prefix, paths, texts, number, both, rule)
        kept = []
        for path, (_, text) in zip(paths, texts, strict=True):
            sentence = clean(text).strip()
            if sentence != text.strip():
                cleaned[path].count(number)
            kept.append(sentence)
        if not any(kept):
            continue  # blank on both sides
        if not all(kept):
            empty, other = paths if not kept[0] else paths[::-1]
            reason = f"line {number} of {empty} is empty, but not line {number} of {other}"
            raise InvalidSetting(key, prefix, reason, rule)
        read.pairs.append(Pair(number, *kept))
    if not read.pairs:
        raise InvalidSetting(key, prefix, f"{paths[0]} and {paths[1]} hold no sentences", rule)
    return read


def _refuse_unaligned(key, prefix, paths, texts, number, rest, rule) -> None:
    """InvalidSetting naming both files' line counts: one ended before line ``number``,
    the other goes on (``rest``: the pairs of lines after it, the ended side None)."""
    shorter = texts.index(None)
    longer = 1 - shorter
    last = number + sum(1 for _ in rest)
    ended = number - 1
    reason = (
        f"{paths[shorter]} has {ended:,} line{'s' * (ended != 1)}, {paths[longer]} {last:,}: "
        "not aligned line by line"
    )
    raise InvalidSetting(key, prefix, reason, rule)
