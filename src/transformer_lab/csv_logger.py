"""``logger=csv``: every logged value in ``<run>/metrics.csv``, one row per step.

Lightning's CSVLogger deletes ``metrics.csv`` (with a warning) whenever its folder is not
empty, which the run folder never is (Hydra has written ``.hydra/`` by then), and a
resumed run would lose the rows before its checkpoint. This one appends instead, keeping
the columns of the rows already written, so a resumed run's file reads like an
uninterrupted one's: ``pandas.read_csv("<run>/metrics.csv")``.
"""

import csv

from lightning.fabric.loggers.logger import rank_zero_experiment
from lightning.pytorch.loggers import CSVLogger
from lightning.pytorch.loggers.csv_logs import ExperimentWriter


class _AppendingWriter(ExperimentWriter):
    def _check_log_dir_exists(self) -> None:  # called by __init__: adopt, never delete
        if self._fs.isfile(self.metrics_file_path):
            with self._fs.open(self.metrics_file_path, "r", newline="") as file:
                self.metrics_keys = list(csv.DictReader(file).fieldnames or [])


class RunCSVLogger(CSVLogger):
    """Lightning's CSVLogger writing ``<save_dir>/metrics.csv``, appended to on resume."""

    def __init__(self, save_dir: str):
        super().__init__(save_dir, name="", version="")  # no lightning_logs/version_N/

    @property
    @rank_zero_experiment
    def experiment(self) -> ExperimentWriter:
        if self._experiment is None:
            self._fs.makedirs(self.root_dir, exist_ok=True)
            self._experiment = _AppendingWriter(log_dir=self.log_dir)
        return self._experiment
