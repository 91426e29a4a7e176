"""``<worker sweep>/study.json``: which Optuna study a worker's trials belong to.

An ``hparams_search=optuna`` study is shared by any number of workers, each a sweep of its
own, in a folder of its own: ``outputs/multirun/study-<name>/<time>/``, beside the study's
default SQLite storage ``study-<name>/optuna.db``, or anywhere with a database URL. Each
worker records here the storage and the study's name (:mod:`transformer_lab.sweep.study`),
and the report reads them back to draw the study, found in the folder it is given or in the
worker folders inside it (:func:`find`). Plain JSON, so that a report of a sweep without a
study never imports Optuna.
"""

from dataclasses import asdict, dataclass
from pathlib import Path

from transformer_lab.records import read_json, write_json

FILE = "study.json"
# the override that gives each job of a study its trial's number (for the pruning
# callback): it names the trial, not a configuration, so the report leaves it out
TRIAL_KEY = "pruning.trial"


@dataclass(frozen=True)
class StudyRecord:
    """``storage``: the study's SQLAlchemy URL (``sqlite:///...`` for a file); ``name``:
    the study's name in it."""

    storage: str
    name: str

    def write(self, sweep_dir: Path) -> Path:
        return write_json(sweep_dir / FILE, asdict(self), "the study this worker's trials join")


def find(folder: Path) -> StudyRecord | None:
    """The study of the worker sweep ``folder``, or of the workers inside the study folder
    ``folder`` (all of one study); None where no worker recorded one."""
    paths = [folder / FILE, *sorted(folder.glob(f"*/{FILE}"))]
    for path in paths:
        record = read_json(path)
        if record is not None:
            return StudyRecord(**record)
    return None
