"""A sweep job's folder name: the overrides it does not share with the other jobs of its
sweep, so TensorBoard shows the jobs side by side by what they vary (``model.norm=pre,
seed=1``), not 0, 1, 2 nor every override they share (``experiment=...``,
``trainer.max_steps=...``: those are in the sweep's ``sweep.json`` command and in each job's
``.hydra/``). Registered as the resolver ``${job_name:}`` that ``conf/hydra/default.yaml``
names ``hydra.sweep.subdir`` with (and ``logger=mlflow`` its run).

The keys a sweep varies are those its ``sweep.json`` records (written when the sweep starts,
before any job, :mod:`transformer_lab.sweep.record`); a job's name is therefore the same
in the sweep's process and in a launcher's worker, and again when a sweep is run anew. A
single run, a sweep without that record, and a sweep of one job are named by all their
overrides, as Hydra's ``override_dirname`` is.
"""

import hashlib
import re
from pathlib import Path

from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import OmegaConf

from transformer_lab.config.validation import ConfigError
from transformer_lab.runs.hparams import override_key
from transformer_lab.runs.sweep_record import SweepRecord


def run_name(override_dirname: str) -> str:
    """A sweep job's folder name from its overrides: ``model/norm=pre`` -> ``model.norm=pre``.

    Slashes would nest folders; a deletion reads as typed (Hydra writes ``~key=null``);
    names past 200 characters keep a readable prefix and a hash of the whole, so distinct
    jobs never share a folder.
    """
    name = re.sub(r"(^|,)(~[^=,]+)=null(?=,|$)", r"\1\2", override_dirname)
    name = name.replace("/", ".") or "defaults"
    if len(name) > 200:
        name = f"{name[:180]}-{hashlib.sha1(name.encode()).hexdigest()[:12]}"
    return name


def folder_name(overrides: list[str], exclude_keys: list[str], swept: frozenset[str] | None) -> str:
    """The folder of the job of ``overrides`` (``["seed=1", ...]``): those of the keys
    ``swept`` (all where that is None or empty) but ``exclude_keys``, sorted and joined as
    Hydra joins ``override_dirname``."""
    parsed = OverridesParser.create().parse_overrides(overrides)
    kept = [o for o in parsed if o.key_or_group not in exclude_keys]
    if swept:
        kept = [o for o in kept if override_key(o.key_or_group) in swept]
    return run_name(",".join(sorted(o.input_line for o in kept)))


def job_name(overrides, exclude_keys, sweep_dir: str) -> str:
    """``${job_name:${hydra:overrides.task},<exclude_keys>,${hydra:sweep.dir}}``: the job's
    folder name, by the keys its sweep's record says it varies."""
    record = SweepRecord.read(Path(sweep_dir))
    return folder_name(list(overrides), list(exclude_keys), record and record.swept)


def check_distinct_folders(
    jobs: list[list[str]], exclude_keys: list[str], swept: frozenset[str]
) -> None:
    """A ConfigError if two jobs of a sweep would run in one folder: they differ only in
    keys the folder names leave out (``ckpt_path=null,<file>``), and one's checkpoints and
    metrics would overwrite the other's."""
    seen: dict[str, list[str]] = {}
    for job in jobs:
        name = folder_name(job, exclude_keys, swept)
        if name in seen and seen[name] != job:
            first = [o for o in seen[name] if o not in job]
            second = [o for o in job if o not in seen[name]]
            keys = ", ".join(sorted({o.split("=", 1)[0] for o in first + second}))
            raise ConfigError(
                f"{keys}: the sweep's jobs {','.join(first)} and {','.join(second)} would run "
                f"in one folder, {name} (run folders are not named by {keys}); allowed: one "
                f"run per value of {keys}, or a sweep over other keys"
            )
        seen[name] = job


OmegaConf.register_new_resolver("job_name", job_name, replace=True)
