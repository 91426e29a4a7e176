"""The command line's overrides, checked the way Hydra will compose them, before Hydra does.

Hydra composes the config before any code of the lab runs, and reports what it cannot
compose (an unknown config group or option, a key the config does not have) in its own
multi-line text with exit status 1, after a sweep has already made its folder for a bad
swept value. So the entry point composes the command line first, through Hydra's public
compose API, and turns what fails into the lab's one line (:class:`InvalidSetting`, exit
status 2): what was typed, and what exists, the nearest matches first.

A sweep's is checked by composing the first job, and the first job with each further value of
a swept group (``data=reverse,pair``), before Hydra composes it; a single run's is composed
by Hydra alone, and composed again here only where Hydra could not
(:func:`composed_once`). What fails is put in one line: an unknown group option with
the options Hydra found (the command line's ``hydra.searchpath`` included), an unknown
group, or an unknown key with the keys beside it (a renamed one with its new name); else
Hydra's message, on one line. A command line with Hydra's own options (``--cfg``,
``--config-dir``, ``--help``, ...) other than ``-m`` is left to Hydra, as is everything
when ``HYDRA_FULL_ERROR=1`` asks for Hydra's full trace.
"""

import difflib
import os
from collections.abc import Iterator
from contextlib import contextmanager

from hydra import compose, initialize_config_module
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import HydraException, MissingConfigException, OverrideParseException
from omegaconf import DictConfig, OmegaConf

from transformer_lab.config.renamed import renamed_key, renamed_reason
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


def unknown_option(error: MissingConfigException) -> InvalidSetting | None:
    """The group option Hydra could not find (``data/pair``), with the options it found,
    those of the command line's ``hydra.searchpath`` included; None for another missing
    config."""
    if not error.missing_cfg_file or error.options is None:
        return None
    group, _, value = error.missing_cfg_file.rpartition("/")
    options = list(error.options)
    allowed = ", ".join(nearest_first(value, options))
    return InvalidSetting(group, value, f"no such option of config group {group}", allowed)


def unknown_group(override: Override, loader) -> InvalidSetting:
    """``override`` names a group (``modle/norm``) that does not exist."""
    key = override.key_or_group
    groups = [g for g in config_groups(loader) if key.startswith("hydra") or "hydra" not in g]
    allowed = ", ".join(nearest_first(key, groups))
    return InvalidSetting(key, override.value(), "no such config group", allowed)


def dotted_keys(node: DictConfig, prefix: str = "") -> list[str]:
    """Every key of ``node``, dotted (``trainer.max_steps``), nodes included."""
    keys = []
    for key, child in node.items_ex(resolve=False):  # a node as it is, not resolved
        keys.append(f"{prefix}{key}")
        if isinstance(child, DictConfig) and child != None:  # noqa: E711 (a node of None)
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
    new = renamed_key(key)
    if new is not None:
        raise InvalidSetting(key, override.value(), renamed_reason(key, new), f"{new}=<value>")
    while parent and not isinstance(OmegaConf.select(config, parent, default=None), DictConfig):
        parent = parent.rpartition(".")[0]
    node = OmegaConf.select(config, parent) if parent else config
    siblings = [f"{parent}.{k}" if parent else str(k) for k in node if k != "hydra"]
    close = difflib.get_close_matches(key, dotted_keys(config), n=5, cutoff=0.75)
    allowed = close + [k for k in nearest_first(key, siblings) if k not in close]
    raise InvalidSetting(
        key,
        override.value(),
        "no such setting",
        f"{', '.join(allowed)}, or +{key}=<value> to add one",
    )


def jobs_to_compose(overrides: list[Override], is_group) -> list[list[str]]:
    """The sweep's first job (each discrete sweep at its first value; a range or interval
    that an optimizing sweeper draws from left to it), and for each further value of a
    swept group (``data=reverse,pair``) the first job with that value: every option the
    command line names, composed once. Swept values of keys need no composing of their own:
    a key exists or not whatever its value."""
    choices = []  # per override: the lines it may take
    for override in overrides:
        if not override.is_sweep_override():
            choices.append([override.input_line])
        elif override.is_discrete_sweep():
            key = override.get_key_element()
            choices.append([f"{key}={value}" for value in override.sweep_string_iterator()])
        else:
            choices.append([])
    first = [lines[0] if lines else None for lines in choices]
    jobs = [first]
    for i, (override, lines) in enumerate(zip(overrides, choices, strict=True)):
        if is_group(override):
            jobs += [[*first[:i], line, *first[i + 1 :]] for line in lines[1:]]
    return [[line for line in job if line is not None] for job in jobs]


def diagnosis(error: HydraException, job: list[str], loader, config_name: str) -> ConfigError:
    """What in ``job`` made Hydra refuse to compose it, in one line: an unknown group option,
    group or key, else Hydra's message."""
    if isinstance(error, MissingConfigException) and (found := unknown_option(error)):
        return found
    parsed = OverridesParser.create(config_loader=loader).parse_overrides(job)
    groups = [o for o in parsed if loader.get_group_options(o.key_or_group)]
    for override in parsed:
        if "/" in override.key_or_group and override not in groups and not override.is_delete():
            return unknown_group(override, loader)
    try:
        config = compose(config_name, [o.input_line for o in groups], return_hydra_config=True)
        for override in parsed:
            if override not in groups and not override.is_delete():
                check_key(override, config)
    except InvalidSetting as unknown:
        return unknown
    except HydraException:
        pass
    return ConfigError(one_line(error))


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
        if set(MULTIRUN) & set(arguments):
            jobs = jobs_to_compose(parsed, lambda o: loader.get_group_options(o.key_or_group))
        else:  # Hydra's own message for a sweep without -m
            jobs = [overrides]
        for job in jobs:
            try:
                compose(config_name, overrides=job, return_hydra_config=True)
            except HydraException as error:
                raise diagnosis(error, job, loader, config_name) from None


def composed(arguments: list[str], config_name: str = "train") -> DictConfig:
    """The config the overrides ``arguments`` compose into, or the ConfigError of
    :func:`check_overrides` naming the first that cannot."""
    check_overrides(arguments, config_name)
    with initialize_config_module("transformer_lab.conf", version_base="1.3"):
        return compose(config_name, overrides=arguments)


def hydra_options(arguments: list[str]) -> bool:
    """Whether ``arguments`` hold one of Hydra's own options other than ``-m``."""
    return any(a.startswith("-") and a not in MULTIRUN for a in arguments)


def check_command_line(arguments: list[str], config_name: str = "train") -> None:
    """:func:`check_overrides` unless Hydra is to handle the command line itself."""
    if hydra_options(arguments) or os.environ.get(FULL_ERROR) == "1":
        return
    check_overrides(arguments, config_name)


FULL_ERROR = "HYDRA_FULL_ERROR"  # Hydra's documented switch: its errors reach the caller
_composing = False  # a single run's command line is being composed by Hydra


@contextmanager
def composed_once(arguments: list[str], config_name: str = "train") -> Iterator[None]:
    """Around Hydra's main: the command line composed once. A sweep's (``-m``) is checked
    first (:func:`check_command_line`: a bad value of its second job would fail only after
    the sweep's folder exists). A single run's is composed by Hydra alone, with its errors
    let through (``HYDRA_FULL_ERROR``) until the composition ends (:func:`end_composition`:
    the run's check, the first thing after it); one that fails there is composed again by
    :func:`check_overrides`, whose ConfigError names the override in one line."""
    global _composing
    single = not (set(MULTIRUN) & set(arguments)) and not hydra_options(arguments)
    if not single or os.environ.get(FULL_ERROR) == "1":
        check_command_line(arguments, config_name)
        yield
        return
    os.environ[FULL_ERROR], _composing = "1", True
    try:
        yield
    except Exception:
        if not _composing:
            raise
        end_composition()
        check_overrides(arguments, config_name)  # a ConfigError for what failed, in one line
        raise  # not the command line's: Hydra's own failure
    finally:
        end_composition()


def end_composition() -> None:
    """Hydra has composed the run's config: its errors are its own to report again."""
    global _composing
    if _composing:
        os.environ.pop(FULL_ERROR, None)
        _composing = False
