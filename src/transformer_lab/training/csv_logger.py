"""``logger=csv``: every logged value in ``<run>/metrics.csv``, one row per step.

The lab's own logger, not Lightning's CSVLogger, because that one deletes ``metrics.csv``
(with a warning) whenever its folder is not empty, which the run folder never is (Hydra
has written ``.hydra/`` by then), so a resumed run would lose the rows before its
checkpoint; and it adds a row per ``log_metrics`` call, while Lightning logs a validation
at the step of the training values logged just before it, so a step would get two rows.

Here the file is appended to, keeping the columns of the rows already written, so a resumed
run's file reads like an uninterrupted one's: ``pandas.read_csv("<run>/metrics.csv")``.
Values logged at the step of a row already written join that row; rows at later steps (a
run killed after its last checkpoint wrote them, and its resume trains those steps again)
are dropped. The columns are sorted, ``step`` among them, as Lightning's writer sorts them.
"""

import csv
from pathlib import Path
from typing import Any

from lightning.pytorch.core.saving import save_hparams_to_yaml
from lightning.pytorch.loggers import Logger
from lightning.pytorch.utilities import rank_zero_only

Row = dict[str, Any]  # "step" and the values logged at that step


def _read(path: Path) -> tuple[list[str], list[Row]]:
    """The file's columns and rows (a value not logged at a row's step is ``""``)."""
    with path.open(newline="") as file:
        reader = csv.DictReader(file)
        rows = list(reader)
        return list(reader.fieldnames or []), rows


class RunCSVLogger(Logger):
    """``<save_dir>/metrics.csv``, appended to on resume, one row per step; the module's
    hyper-parameters in ``<save_dir>/hparams.yaml``, as Lightning's loggers leave them.
    Rows are kept until Lightning saves the logger (after every logging call)."""

    def __init__(self, save_dir: str):
        super().__init__()
        self._save_dir = str(save_dir)
        self.path = Path(save_dir) / "metrics.csv"
        self.pending: list[Row] = []  # rows not in the file yet, by increasing step
        self.columns: list[str] | None = None  # the file's header; None: not read yet
        self.written_step: int | None = None  # the step of the file's last row

    @property
    def name(self) -> str:
        return ""

    @property
    def version(self) -> str:
        return ""

    @property
    def save_dir(self) -> str:
        return self._save_dir

    @property
    def root_dir(self) -> str:
        return self._save_dir

    @property
    def log_dir(self) -> str:
        return self._save_dir

    @rank_zero_only
    def log_hyperparams(self, params, *args, **kwargs) -> None:
        Path(self._save_dir).mkdir(parents=True, exist_ok=True)
        save_hparams_to_yaml(Path(self._save_dir) / "hparams.yaml", params)

    @rank_zero_only
    def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
        if step is None:  # Lightning passes a step; a direct call gets the next one
            step = self.pending[-1]["step"] + 1 if self.pending else 0
        if self.pending and self.pending[-1]["step"] == step:
            self.pending[-1] |= metrics
        else:
            self.pending.append({"step": step, **metrics})

    @rank_zero_only
    def save(self) -> None:
        if not self.pending:
            return
        if self.columns is None:  # the first save: adopt the file a resumed run left
            self.columns, rows = _read(self.path) if self.path.is_file() else ([], [])
            self.written_step = int(rows[-1]["step"]) if rows else None
        first = self.pending[0]["step"]
        columns = sorted(set(self.columns).union(*self.pending))
        rejoins = self.written_step is not None and first <= self.written_step
        if columns != self.columns or rejoins:
            self._rewrite(columns)
        else:
            with self.path.open("a", newline="") as file:
                csv.DictWriter(file, fieldnames=self.columns).writerows(self.pending)
        self.written_step = self.pending[-1]["step"]
        self.pending = []

    def _rewrite(self, columns: list[str]) -> None:
        """The whole file with ``columns``: its rows before the first pending step, the
        row at that step (if written) joined by the pending one, the pending rows."""
        _, rows = _read(self.path) if self.path.is_file() else ([], [])
        first = self.pending[0]["step"]
        kept = [r for r in rows if int(r["step"]) < first]
        at_first = [r for r in rows if int(r["step"]) == first]
        if at_first:
            written = {k: v for k, v in at_first[-1].items() if v != ""}
            self.pending[0] = written | self.pending[0]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("w", newline="") as file:
            writer = csv.DictWriter(file, fieldnames=columns)
            writer.writeheader()
            writer.writerows(kept + self.pending)
        self.columns = columns
