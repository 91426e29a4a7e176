"""``logger=csv``: every logged value in ``<run>/metrics.csv``, one row per step.

Lightning's CSVLogger deletes ``metrics.csv`` (with a warning) whenever its folder is not
empty, which the run folder never is (Hydra has written ``.hydra/`` by then), and a
resumed run would lose the rows before its checkpoint. This one appends instead, keeping
the columns of the rows already written, so a resumed run's file reads like an
uninterrupted one's: ``pandas.read_csv("<run>/metrics.csv")``.

Lightning's writer also adds a row per ``log_metrics`` call, and Lightning logs a
validation at the step of the training values logged just before it (and writes the file
after every call), so a step would get two rows. Here values logged at the step of the
last row join that row, written or not.
"""

import csv

from lightning.fabric.loggers.logger import rank_zero_experiment
from lightning.pytorch.loggers import CSVLogger
from lightning.pytorch.loggers.csv_logs import ExperimentWriter


class _AppendingWriter(ExperimentWriter):
    def _check_log_dir_exists(self) -> None:  # called by __init__: adopt, never delete
        self.written_step = None  # the step of the file's last row
        if self._fs.isfile(self.metrics_file_path):
            self.metrics_keys, rows = self._read()
            self.written_step = int(rows[-1]["step"]) if rows else None

    def _read(self) -> tuple[list[str], list[dict[str, str]]]:
        """The file's columns and rows (a value not logged at a row's step is ``""``)."""
        with self._fs.open(self.metrics_file_path, "r", newline="") as file:
            reader = csv.DictReader(file)
            rows = list(reader)
            return list(reader.fieldnames or []), rows

    def log_metrics(self, metrics_dict: dict[str, float], step: int | None = None) -> None:
        super().log_metrics(metrics_dict, step)
        if len(self.metrics) > 1 and self.metrics[-2]["step"] == self.metrics[-1]["step"]:
            self.metrics[-2] |= self.metrics.pop()

    def save(self) -> None:
        if self.metrics and self.metrics[0]["step"] == self.written_step:
            _, rows = self._read()  # the file less its last row, which the first one joins
            written = {k: v for k, v in rows.pop().items() if v != ""}
            self.metrics[0] = written | self.metrics[0]
            with self._fs.open(self.metrics_file_path, "w", newline="") as file:
                writer = csv.DictWriter(file, fieldnames=self.metrics_keys)
                writer.writeheader()
                writer.writerows(rows)
        if self.metrics:
            self.written_step = self.metrics[-1]["step"]
        super().save()


class RunCSVLogger(CSVLogger):
    """Lightning's CSVLogger writing ``<save_dir>/metrics.csv``, appended to on resume, one
    row per step."""

    def __init__(self, save_dir: str):
        super().__init__(save_dir, name="", version="")  # no lightning_logs/version_N/

    @property
    @rank_zero_experiment
    def experiment(self) -> ExperimentWriter:
        if self._experiment is None:
            self._fs.makedirs(self.root_dir, exist_ok=True)
            self._experiment = _AppendingWriter(log_dir=self.log_dir)
        return self._experiment
