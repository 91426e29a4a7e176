"""The command line of the commands that read a checkpoint (evaluate, generate).

Their settings are a file of ``conf/`` (``evaluate.yaml``, ``generate.yaml``), composed by
Hydra's compose API with the command line's ``<setting>=<value>`` arguments as its
overrides, but without ``@hydra.main``: these commands make no run folder. Only the file's
settings can be set: Hydra would add an unknown key (``+key``) that nothing reads, so a
misspelt setting would be ignored. The settings that are paths (``ckpt_path``, ``output``,
...) are taken as typed: a sweep's run folders are named by their overrides
(``model.norm=pre,seed=1``), whose ``=`` and ``,`` Hydra's override grammar reads as
syntax, so such a value reaches Hydra as a quoted string, which it reads back unchanged.
What cannot be done is one ``error:`` line and exit status 2.
"""

import re
import sys
from importlib.resources import files
from typing import NoReturn

from hydra import compose, initialize_config_module
from hydra.errors import OverrideParseException
from omegaconf import DictConfig, OmegaConf

from transformer_lab.config.command_line import nearest_first
from transformer_lab.config.renamed import renamed_key, renamed_reason
from transformer_lab.config.validation import one_line


class EvaluationError(ValueError):
    """What was asked of a checkpoint cannot be done: a missing or foreign checkpoint, a bad
    setting."""


def quoted(value: str) -> str:
    """``value`` as a quoted string of Hydra's override grammar, read back as typed: each
    run of backslashes before a quote or at the end doubled, each quote escaped."""
    escaped = re.sub(r"(\\*)('|\Z)", lambda m: m[1] * 2 + ("\\'" if m[2] else ""), value)
    return f"'{escaped}'"


def override(argument: str, names: list[str], path_settings) -> str:
    """The override Hydra composes for ``argument``, a ``<setting>=<value>`` of the file's
    settings ``names``; a path's value quoted."""
    name, sep, value = argument.partition("=")
    new = renamed_key(name)
    if name not in names and new is not None:
        raise EvaluationError(
            f"{name}={value}: {renamed_reason(name, new)}; allowed: {new}=<value>"
        )
    if name not in names:
        raise EvaluationError(
            f"{name} is not a setting; allowed: {', '.join(nearest_first(name, names))}"
        )
    if not sep:
        raise EvaluationError(f"{name} needs a value: {name}=<value>")
    return f"{name}={quoted(value)}" if name in path_settings else argument


def configure(argv: list[str], config: str, path_settings) -> DictConfig:
    """``conf/<config>.yaml`` with the command line's ``<setting>=<value>`` arguments, the
    settings ``path_settings`` taken as typed."""
    with initialize_config_module("transformer_lab.conf", version_base="1.3"):
        names = setting_names(OmegaConf.to_container(compose(config)))
        overrides = [override(argument, names, path_settings) for argument in argv]
        try:
            return compose(config, overrides=overrides)
        except OverrideParseException as error:
            raise EvaluationError(f"{error.override}: {one_line(error)}") from None


def setting_names(config: dict, prefix: str = "") -> list[str]:
    """Every setting of ``config``, dotted: ``beam_size``, ``data.test_size``, ..."""
    return [
        name
        for key, value in config.items()
        for name in (
            setting_names(value, f"{prefix}{key}.")
            if isinstance(value, dict)
            else [f"{prefix}{key}"]
        )
    ]


def usage(config: str, script: str, tail: str = "") -> str:
    """The usage line of ``python -m transformer_lab.<config>`` (console script ``script``)
    and its settings, as ``conf/<config>.yaml`` documents them."""
    settings = files("transformer_lab.conf").joinpath(f"{config}.yaml").read_text()
    return (
        f"usage: python -m transformer_lab.{config} (or {script}) "
        f"ckpt_path=<checkpoint or run folder> [<setting>=<value> ...]{tail}\n\n"
        f"settings (conf/{config}.yaml):\n\n{settings}"
    )


def refuse(error: EvaluationError) -> NoReturn:
    """The one ``error:`` line on stderr, and exit status 2."""
    print(f"error: {error}", file=sys.stderr)
    sys.exit(2)
