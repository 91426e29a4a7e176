"""A sweep job's folder name: its overrides, so TensorBoard shows the jobs side by side by
what they vary (``model.norm=pre,seed=1``) instead of 0, 1, 2. Registered as the resolver
``${run_name:}`` that ``conf/hydra/default.yaml`` names ``hydra.sweep.subdir`` with."""

import hashlib
import re

from omegaconf import OmegaConf


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


OmegaConf.register_new_resolver("run_name", run_name, replace=True)
