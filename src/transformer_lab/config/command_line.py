"""The command line's overrides, checked the way Hydra will compose them, before Hydra does.

Hydra composes the config before any code of the lab runs, and reports what it cannot
compose (an unknown config group or option, a key the config does not have) in its own
multi-line text with exit status 1, after a sweep has already made its folder for a bad
swept value. So the entry point composes the command line first, through Hydra's public
compose API, and turns what fails into the lab's one line (:class:`InvalidSetting`, exit
status 2): what was typed, and what exists, the nearest matches first.

Checked: every group option of the command line, each swept value included; every key it
sets, in the config its groups compose (each value of a swept group once); and, composed as
a whole, the first job. What else Hydra refuses gets its message on one line. A command
line with Hydra's own options (``--cfg``, ``--config-dir``, ``--help``, ...) other than
``-m`` is left to Hydra, as is everything when ``HYDRA_FULL_ERROR=1`` asks for Hydra's
full trace.
"""

import difflib
import os

from hydra import compose, initialize_config_module
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import HydraException, OverrideParseException
from omegaconf import DictConfig, OmegaConf

from transformer_lab.config.validation import ConfigError, InvalidSetting, one_line

MULTIRUN = ("-m", "--multirun")


def nearest_first(typed: str, names: list[str]) -> list[str]:
    """``names`` with those close to ``typed`` first (closest first), the rest in order."""
    close = difflib.get_close_matches(typed, names, n=len(names), cutoff=0.6)
    return close + [name for name in names if name not in close]


def config_groups(loader, parent: str = "") -> list[str]:
    """Every config group below ``parent``, nested ones by their path (``model/norm``)."""
    groups = []
    for name in loader.list_groups(parent):
        group = f"{parent}/{name}" if parent else name
        groups += [group, *config_groups(loader, group)]
    return groups


def values(override: Override) -> list:
    """The values ``override`` sets: each value of a discrete sweep, else its one value
    (None for a range or interval an optimizing sweeper draws from)."""
    if not override.is_sweep_override():
        return [override.value()]
    return list(override.sweep_iterator()) if override.is_discrete_sweep() else []


def typed(override: Override):
    """The value of ``override`` as it names it in a message: as typed for a sweep
    (``1,2``), else parsed (``10``, ``'pair'``)."""
    return (
        override.input_line.partition("=")[2] if override.is_sweep_override() else override.value()
    )


def check_group_option(override: Override, loader) -> None:
    """A group override names a group that exists and, for each of its values, an option
    of it."""
    key = override.key_or_group
    options = loader.get_group_options(key)
    if not options:
        groups = [g for g in config_groups(loader) if key.startswith("hydra") or "hydra" not in g]
        raise InvalidSetting(
            key, typed(override), "no such config group",
            ", ".join(nearest_first(key, groups)),
        )  # fmt: skip
    for value in values(override):
        if isinstance(value, str) and value not in options:
            raise InvalidSetting(
                key, value, f"no such option of config group {key}",
                ", ".join(nearest_first(value, options)),
            )  # fmt: skip


def dotted_keys(node: DictConfig, prefix: str = "") -> list[str]:
    """Every key of ``node``, dotted (``trainer.max_steps``), nodes included."""
    keys = []
    for key in node:
        child = node._get_node(key)
        keys.append(f"{prefix}{key}")
        if isinstance(child, DictConfig):
            keys += dotted_keys(child, f"{prefix}{key}.")
    return keys


def check_key(override: Override, config: DictConfig) -> None:
    """A ``key=value`` override (not ``+key``/``++key``) sets a key ``config`` has."""
    key = override.key_or_group
    parent, _, leaf = key.rpartition(".")
    node = OmegaConf.select(config, parent, default=None) if parent else config
    found = isinstance(node, DictConfig) and leaf in node.keys()  # noqa: SIM118 (??? ones too)
    if found or override.is_add() or override.is_force_add():
        return
    while parent and not isinstance(OmegaConf.select(config, parent, default=None), DictConfig):
        parent = parent.rpartition(".")[0]
    node = OmegaConf.select(config, parent) if parent else config
    siblings = [f"{parent}.{k}" if parent else str(k) for k in node if k != "hydra"]
    close = difflib.get_close_matches(key, dotted_keys(config), n=5, cutoff=0.75)
    allowed = close + [k for k in nearest_first(key, siblings) if k not in close]
    raise InvalidSetting(
        key, typed(override), "no such setting",
        f"{', '.join(allowed)}, or +{key}=<value> to add one",
    )  # fmt: skip


def first_job(overrides: list[Override]) -> list[str]:
    """The overrides of the sweep's first job: each discrete sweep at its first value, an
    optimizing sweeper's range or interval left to the sweeper."""
    job = []
    for override in overrides:
        if not override.is_sweep_override():
            job.append(override.input_line)
        elif override.is_discrete_sweep():
            first = next(override.sweep_string_iterator())
            job.append(f"{override.get_key_element()}={first}")
    return job


def check_overrides(arguments: list[str], config_name: str) -> None:
    """A ConfigError for the first override of ``arguments`` (``-m`` allowed) that Hydra
    could not compose into ``config_name``."""
    overrides = [a for a in arguments if a not in MULTIRUN]
    with initialize_config_module("transformer_lab.conf", version_base="1.3"):
        loader = GlobalHydra.instance().config_loader()
        try:
            parsed = OverridesParser.create(config_loader=loader).parse_overrides(overrides)
        except OverrideParseException as error:
            raise ConfigError(f"{error.override}: {one_line(error)}") from None
        groups, keys = [], []
        for override in parsed:
            key = override.key_or_group
            grouped = "/" in key or loader.get_group_options(key)
            (groups if grouped else keys).append(override)
        try:
            for override in groups:
                if not override.is_delete():
                    check_group_option(override, loader)
            config = compose(config_name, overrides=first_job(groups), return_hydra_config=True)
            for override in keys:
                if not override.is_delete():
                    check_key(override, config)
            job = first_job(parsed) if set(MULTIRUN) & set(arguments) else overrides
            compose(config_name, overrides=job, return_hydra_config=True)
        except HydraException as error:
            raise ConfigError(one_line(error)) from None


def hydra_options(arguments: list[str]) -> bool:
    """Whether ``arguments`` hold one of Hydra's own options other than ``-m``."""
    return any(a.startswith("-") and a not in MULTIRUN for a in arguments)


def check_command_line(arguments: list[str], config_name: str = "train") -> None:
    """:func:`check_overrides` unless Hydra is to handle the command line itself."""
    if hydra_options(arguments) or os.environ.get("HYDRA_FULL_ERROR") == "1":
        return
    check_overrides(arguments, config_name)
