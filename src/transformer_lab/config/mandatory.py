"""A mandatory setting left out: one line that names it and says what to give.

A ``???`` in ``conf/`` is a setting with no default that a config needs
(``data=pairs`` needs ``data.train_path``). OmegaConf raises ``MissingMandatoryValue``
only when something reads it, which is after Hydra made the run folder, in a many-line
traceback. So the check before any folder looks for every ``???`` the composed config
still has and refuses the first in one line. What to give is the comment beside the
``???`` in its YAML file (``train_path: ???  # the training pairs: ...``), the one place a
reader of ``conf/`` looks for it too; every ``???`` of ``conf/`` has one
(tests/config/test_mandatory.py).
"""

import re
from importlib.resources import files

from omegaconf import DictConfig, ListConfig, OmegaConf

from transformer_lab.config.validation import InvalidSetting

MISSING = "???"


def missing_settings(node: DictConfig | ListConfig, prefix: str = "") -> list[str]:
    """The dotted keys of ``node`` still ``???``, in the config's order, without resolving
    any interpolation (a job's ``${hydra:...}`` cannot be resolved before Hydra runs it)."""
    keys = node.keys() if isinstance(node, DictConfig) else range(len(node))
    found = []
    for key in keys:
        name = f"{prefix}{key}"
        if OmegaConf.is_missing(node, key):
            found.append(name)
        elif not OmegaConf.is_interpolation(
            node, key
        ):  # a plain child: reading it resolves nothing
            child = node[key]
            if isinstance(child, DictConfig | ListConfig):
                found += missing_settings(child, f"{name}.")
    return found


def source_file(key: str, choices: dict[str, str], primary: str) -> tuple[str, str]:
    """The YAML file of ``conf/`` that sets ``key`` (its config group's chosen option, else
    the primary config ``primary``) and the key's name there."""
    parts = key.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        group = "/".join(parts[:cut])
        if choices.get(group):
            return f"{group}/{choices[group]}.yaml", parts[-1]
    return f"{primary}.yaml", parts[-1]


def what_to_give(key: str, choices: dict[str, str], primary: str) -> str:
    """The comment beside ``key``'s ``???`` in its file of ``conf/``; ``<value>`` where
    there is none (a config of the user's own, ``--config-dir``)."""
    path, leaf = source_file(key, choices, primary)
    conf = files("transformer_lab.conf").joinpath(path)
    text = conf.read_text() if conf.is_file() else ""
    pattern = rf"^\s*{re.escape(leaf)}:\s*{re.escape(MISSING)}\s*#\s*(.+?)\s*$"
    found = re.search(pattern, text, re.MULTILINE)
    return f"<{found[1]}>" if found else "<value>"


def check_given(cfg: DictConfig, choices: dict[str, str], primary: str = "train") -> None:
    """InvalidSetting for the first setting of ``cfg`` (without its ``hydra`` node) left at
    ``???``; ``choices`` are the config groups' options (``hydra.runtime.choices``)."""
    for key in missing_settings(cfg):
        chosen = [f"{g}={o}" for g, o in choices.items() if key.startswith(f"{g}.") and o]
        needed = f"{' and '.join(chosen)} needs it" if chosen else "it has no default"
        give = what_to_give(key, choices, primary)
        raise InvalidSetting(key, MISSING, f"not given; {needed}", f"{key}={give}")
