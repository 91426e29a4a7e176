"""``<worker sweep>/study.json``: which Optuna study a worker's trials belong to.

An ``hparams_search=optuna`` study is shared by any number of workers, each a sweep of its
own, in a folder of its own: ``outputs/multirun/study-<name>/<time>/``, beside the study's
default SQLite storage ``study-<name>/optuna.db``, or anywhere with a database URL. Each
worker records here the storage and the study's name (:mod:`transformer_lab.sweep.study`),
and the report reads them back to draw the study, found in the folder it is given or in the
worker folders inside it (:func:`find`). Plain JSON, so that a report of a sweep without a
study never imports Optuna.
"""

import json
from dataclasses import asdict, dataclass
from pathlib import Path

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
        sweep_dir.mkdir(parents=True, exist_ok=True)
        path = sweep_dir / FILE
        path.write_text(json.dumps(asdict(self), indent=2) + "\n")
        return path


def find(folder: Path) -> StudyRecord | None:
    """The study of the worker sweep ``folder``, or of the workers inside the study folder
    ``folder`` (all of one study); None where no worker recorded one."""
    paths = [folder / FILE, *sorted(folder.glob(f"*/{FILE}"))]
    for path in paths:
        if path.is_file():
            return StudyRecord(**json.loads(path.read_text()))
    return None
