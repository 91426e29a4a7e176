"""Hydra's records of a job (``.hydra/config.yaml``, ``hydra.yaml``, ``overrides.yaml``)
written whole or not at all, like every record of the lab (:mod:`transformer_lab.records`).

Hydra writes them with a plain ``open(..., "w")`` in ``hydra.core.utils._save_config``,
which ``run_job`` calls before the job's function: a full disk leaves a 0-byte
``config.yaml`` (a job the report cannot read, a folder whose config nobody can compare)
and a traceback. This module replaces that private function (through
:mod:`transformer_lab.private_apis`, the one place that touches it) with an atomic write
that ends the command in one line naming the file (exit 1) where the write fails.
tests/config/test_hydra_saves.py pins the contract (the function's name and arguments, and
that ``run_job`` calls it) for the Hydra versions the project allows.
"""

from pathlib import Path

from omegaconf import OmegaConf

from transformer_lab.private_apis import replace_hydra_job_save
from transformer_lab.records import RecordNotWritten, fail, write_atomically


def save_config(cfg, filename: str, output_dir: Path) -> None:
    """What ``hydra.core.utils._save_config`` writes, atomically."""
    try:
        write_atomically(Path(output_dir) / filename, OmegaConf.to_yaml(cfg), f"Hydra's {filename}")
    except RecordNotWritten as error:  # outside the job's function: Hydra would print a trace
        fail(error)


def install() -> None:
    """Hydra's job records written by :func:`save_config` from now on, in this process."""
    replace_hydra_job_save(save_config)
