"""The lab's own files, written whole or not at all, and read back or named as damaged.

DESIGN.md, *Records*: every file a run or a sweep writes (``metrics.json``, ``failed.json``,
the configs, ``summary.json``, ``sweep.json``, figures) is written to a temporary file in
its own folder and renamed over its name (POSIX ``rename`` is atomic within a folder). A
process killed or a disk that fills up mid-write leaves the old file or none, never half of
one: SQLite's promise, an interruption at any instant leaves the old state or the new one.

A write that fails (``ENOSPC``, a read-only or vanished folder) removes its temporary file
and raises :class:`RecordNotWritten`, which names the file and what it holds in one line.
A record that exists but cannot be read back (an empty or cut file written by an older
version or by hand) raises :class:`DamagedRecord`, naming the file, from :func:`read_json`
or :func:`read_yaml`, the readers every part of the lab reads its records with.

Imported by every stage (``tests/test_package_layout.py``): the checkpoint IO, the
callbacks' figures and the records of runs, sweeps and reports all write through it.
"""

import errno
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, NoReturn

import yaml
from omegaconf import DictConfig, ListConfig, OmegaConf

from transformer_lab.private_apis import omegaconf_yaml_loader


class RecordNotWritten(OSError):
    """A record that could not be written: ``path``, ``what`` it holds, and the reason."""

    def __init__(self, path: Path, what: str, reason: str):
        super().__init__(f"{path}: could not write {what}: {reason}")
        self.path, self.what, self.reason = Path(path), what, reason

    def __str__(self) -> str:
        return self.args[0]

    def __reduce__(self):  # rebuilt from its parts, e.g. sent back by a sweep's worker
        return RecordNotWritten, (self.path, self.what, self.reason)


class DamagedRecord(ValueError):
    """A record of the lab that is there but unreadable: ``path`` and why."""

    def __init__(self, path: Path, reason: str):
        super().__init__(
            f"{path} is damaged ({reason}); remove it, or run its job again to write it anew"
        )
        self.path, self.reason = Path(path), reason

    def __reduce__(self):
        return DamagedRecord, (self.path, self.reason)


def fail(error: "RecordNotWritten | DamagedRecord") -> NoReturn:
    """The one line a record that a command cannot write or read gets, and exit status 1
    (not 2: the command's settings are fine, the disk or the file is not)."""
    print(f"error: {error}", file=sys.stderr, flush=True)
    sys.exit(1)


def reason_of(error: BaseException) -> str:
    """An OSError as ``strerror`` (``No space left on device``), anything else as its text,
    on one line."""
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return " ".join(str(error).split()) or type(error).__name__


def write_atomically(path: Path, data: str | bytes | Callable[[BinaryIO], None], what: str) -> Path:
    """Write ``data`` to ``path`` whole or not at all (see the module's docstring); the
    folder is made if missing. ``data``: the text or the bytes, or a function that writes
    them into the file it is given (a checkpoint, streamed). ``what``: what the file holds,
    for the error's one line."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as error:
        raise RecordNotWritten(path, what, reason_of(error)) from error
    try:
        with os.fdopen(fd, "wb") as file:
            if callable(data):
                data(file)
            else:
                file.write(data.encode() if isinstance(data, str) else data)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, 0o644)  # mkstemp's 0600 would hide the record from its group
        os.replace(temporary, path)
    except BaseException as error:
        Path(temporary).unlink(missing_ok=True)
        failed = os_error_in(error)
        if failed is not None:
            raise RecordNotWritten(path, what, reason_of(failed)) from error
        raise
    return path


# what a full or failing disk raises on a write: no space, no quota, read-only, I/O
WRITE_FAILURES = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG, errno.EIO)


def unwritten(error: BaseException, folder: Path) -> RecordNotWritten | None:
    """The write that ``error`` comes from, as one :class:`RecordNotWritten`: the lab's own
    (first in the chain of exceptions: a failed write of the lab's can set off others, as
    a logger closing on it), or a library's failed write into ``folder`` (TensorBoard's
    events, the job's log), named by its file where the OSError has one; None for any
    other error."""
    seen, cause = set(), error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, RecordNotWritten):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    failed = os_error_in(error)
    if failed is None or failed.errno not in WRITE_FAILURES:
        return None
    if failed.filename:
        return RecordNotWritten(Path(failed.filename), "a file of the run", reason_of(failed))
    return RecordNotWritten(folder, "the run's TensorBoard events or logs", reason_of(failed))


def os_error_in(error: BaseException) -> OSError | None:
    """The OSError behind ``error``: itself, or one it was raised from or while handling
    (torch's writer turns a full disk into ``RuntimeError: [enforce fail at
    inline_container.cc...]`` raised while handling the OSError); None if there is none."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, OSError):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def write_json(path: Path, record, what: str) -> Path:
    """``record`` as indented JSON, atomically (:func:`write_atomically`)."""
    return write_atomically(path, json.dumps(record, indent=2) + "\n", what)


def read_json(path: Path):
    """The JSON record at ``path``, or None where there is none; :class:`DamagedRecord`
    naming the file where it is there but empty, cut or not JSON."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise DamagedRecord(path, reason_of(error)) from error
    if not text.strip():
        raise DamagedRecord(path, "empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise DamagedRecord(path, f"not JSON: {error}") from error


def _config_loader() -> type:
    """``OmegaConf.load``'s YAML loader (YAML 1.2's floats such as ``1e-3``, no timestamps, a
    duplicate key refused) on libyaml's parser where PyYAML has it (its wheels do): the same
    documents, parsed ~10 times faster. A grid's report reads two ~10 kB configs a job, and
    their parsing in pure Python was a quarter of its time."""
    omegaconf_loader = omegaconf_yaml_loader()
    if not yaml.__with_libyaml__:
        return omegaconf_loader
    from yaml.cyaml import CParser

    class ConfigLoader(CParser, omegaconf_loader):
        def __init__(self, stream):  # yaml.CSafeLoader's: libyaml parses, OmegaConf's resolves
            CParser.__init__(self, stream)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)

    return ConfigLoader


CONFIG_LOADER = _config_loader()


def read_yaml(path: Path) -> DictConfig | ListConfig | None:
    """A YAML record (a config the lab or Hydra saved) as ``OmegaConf.load`` reads it, or
    None where there is none; :class:`DamagedRecord` naming it where it is empty or not
    YAML."""
    document = read_yaml_document(path)
    return None if document is None else as_omegaconf(path, document)


def read_yaml_document(path: Path) -> dict | list | None:
    """The YAML record at ``path`` as the plain values ``OmegaConf.load`` builds its config
    from (a document with nothing in it is ``{}``), or None where there is none;
    :class:`DamagedRecord` naming it where it is empty or not YAML."""
    path = Path(path)
    if not path.is_file():
        return None
    content = path.read_bytes()  # libyaml reads UTF-8 (or 16) bytes as OmegaConf reads text
    if not content.strip():  # even an empty list or mapping is written as [] or {}
        raise DamagedRecord(path, "empty")
    try:
        document = yaml.load(content, Loader=CONFIG_LOADER)
    except Exception as error:  # yaml's own kinds
        raise _not_yaml(path, error) from error
    return document if document is not None else {}


def as_omegaconf(path: Path, document: dict | list) -> DictConfig | ListConfig:
    """``document`` (read from ``path``) as OmegaConf's config; :class:`DamagedRecord`
    naming ``path`` where OmegaConf refuses it."""
    try:
        return OmegaConf.create(document)
    except Exception as error:  # OmegaConf's own kinds
        raise _not_yaml(path, error) from error


def _not_yaml(path: Path, error: Exception) -> DamagedRecord:
    return DamagedRecord(path, f"not YAML: {' '.join(str(error).split())[:160]}")


def read_config(path: Path) -> DictConfig | None:
    """A config the lab or Hydra saved (``.hydra/config.yaml``, ``config_resolved.yaml``):
    :func:`read_yaml`, a mapping."""
    document = read_config_document(path)
    return None if document is None else as_omegaconf(path, document)


def read_config_document(path: Path) -> dict | None:
    """The config at ``path`` as the plain values :func:`read_config` builds it from, or
    None where there is none; :class:`DamagedRecord` as :func:`read_config` raises it."""
    document = read_yaml_document(path)
    if document is None or isinstance(document, dict):
        return document
    as_omegaconf(path, document)  # a scalar: refused by OmegaConf, as read_yaml names it
    raise DamagedRecord(path, "not a mapping")


def stale_temporaries(folder: Path) -> list[Path]:
    """The temporary files that writes killed mid-way left in ``folder`` (never read: the
    record they were to become is the old one or absent)."""
    return sorted(Path(folder).glob(".*.tmp")) if Path(folder).is_dir() else []
