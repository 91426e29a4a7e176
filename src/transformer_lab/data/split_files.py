"""Where one split's pairs are read from: one file of pairs (TSV or JSONL, see
:mod:`.pair_files`) or two parallel files of a prefix (:mod:`.parallel_files`), named by
the setting ``key`` that gave them.

A :class:`SplitFiles` knows its files, what identifies their content now (sizes and
modification times, what the cache of :func:`~.pairs_reading.read` keys on, so a file
changed in place is read again) and its sha256 (one file's hex digest; for parallel files
one per language), which a run records so that evaluate finds the same content again.
"""

import hashlib
from dataclasses import dataclass
from pathlib import Path

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.data.pair_files import FileRead, read_pairs
from transformer_lab.data.parallel_files import language_files, read_parallel

PARALLEL = "parallel"


def sha256_of(path: str) -> str:
    """The hex sha256 of a file's bytes, read a megabyte at a time."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while block := file.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class SplitFiles:
    """``path``: a file of pairs in ``format`` (``tsv``, ``jsonl``), or with ``format``
    ``parallel`` the prefix of one file per language of ``languages`` (source, target).
    ``value``: the value of the setting ``key`` that names them, where it is not ``path``
    itself (a corpus's folder), which refusals name."""

    key: str
    path: str
    format: str
    languages: tuple[str, str] | None = None
    value: str | None = None

    @property
    def shown(self) -> str:
        """The setting's value, as a refusal names it."""
        return self.value if self.value is not None else self.path

    def files(self) -> tuple[str, ...]:
        """The files themselves; InvalidSetting naming ``key`` where parallel ones are
        missing (a missing single file is refused when it is read)."""
        if self.format == PARALLEL:
            assert self.languages is not None
            return language_files(self.key, self.path, self.languages)
        return (self.path,)

    def exist(self) -> bool:
        try:
            return all(Path(path).is_file() for path in self.files())
        except ValueError:  # InvalidSetting: parallel files missing
            return False

    def identity(self) -> tuple:
        """This, and each file's size and modification time (None where it is missing)."""
        stats = []
        for path in self.files() if self.exist() else ():
            stat = Path(path).stat()
            stats.append((path, stat.st_size, stat.st_mtime_ns))
        return self, tuple(stats)

    def read(self) -> FileRead:
        """The pairs; InvalidSetting naming the setting by its value."""
        try:
            if self.format == PARALLEL:
                assert self.languages is not None
                return read_parallel(self.key, self.path, self.languages)
            return read_pairs(self.key, self.path, self.format)
        except InvalidSetting as error:
            raise InvalidSetting(self.key, self.shown, error.reason, error.allowed) from None

    def sha256(self) -> str | dict[str, str]:
        """The file's sha256, or ``{language: sha256}`` of parallel files."""
        if self.format == PARALLEL:
            assert self.languages is not None
            return dict(zip(self.languages, map(sha256_of, self.files()), strict=True))
        return sha256_of(self.path)
