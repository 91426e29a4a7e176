"""A sweep job's folder name: its overrides, so TensorBoard shows the jobs side by side by
what they vary (``model.norm=pre,seed=1``) instead of 0, 1, 2. Registered as the resolver
``${run_name:}`` that ``conf/hydra/default.yaml`` names ``hydra.sweep.subdir`` with."""

import hashlib
import re

from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import DictConfig, OmegaConf

from transformer_lab.config.validation import ConfigError


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


def folder_of(job: list[str], settings: DictConfig) -> str:
    """The folder name Hydra gives the job of overrides ``job`` (``["seed=1", ...]``), as it
    computes ``override_dirname`` with ``settings`` (``hydra.job.config.override_dirname``):
    the overrides but ``exclude_keys``, sorted, joined."""
    parsed = OverridesParser.create().parse_overrides(job)
    lines = sorted(o.input_line for o in parsed if o.key_or_group not in settings.exclude_keys)
    return run_name(settings.item_sep.join(lines).replace("=", settings.kv_sep))


def check_distinct_folders(jobs: list[list[str]], settings: DictConfig) -> None:
    """A ConfigError if two jobs of a sweep would run in one folder: they differ only in
    keys the folder names leave out (``ckpt_path=null,<file>``), and one's checkpoints and
    metrics would overwrite the other's."""
    seen: dict[str, list[str]] = {}
    for job in jobs:
        name = folder_of(job, settings)
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


OmegaConf.register_new_resolver("run_name", run_name, replace=True)
