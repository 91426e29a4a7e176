"""The composed config of each job of a sweep, known before the sweep starts.

Hydra's basic sweeper (the plain ``-m``, with any launcher: basic, joblib, submitit) runs
the cross product of the command line's sweep overrides, and each launcher composes a
job's config with ``config_loader.load_sweep_config``. This expands the sweep ahead
of time the way that sweeper does (one list of values per key, a later override of a key
replacing an earlier one in its place, their cross product in order), through Hydra's public
override parser, so that every job can be checked before the first one makes a folder.
Another sweeper (optuna) draws its jobs as it goes: only the sweep's own config is known.

Composing costs about 0.1 s a job, too much to repeat 40 times at the start of a sweep,
and most jobs of a sweep differ in values only (``seed=0,1,2``). So a job is composed once
per combination of config groups it picks (``model/norm=pre``), and its value overrides
(``seed=1``, ``~callbacks.samples``) are applied to a copy the way Hydra applies them,
after the groups (:func:`apply_value_overrides`): the same config ``load_sweep_config``
makes (tested).
"""

import copy
import itertools
from collections.abc import Iterator

from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import ConfigCompositionException, HydraException
from omegaconf import DictConfig, OmegaConf, open_dict
from omegaconf.errors import ConfigAttributeError, ConfigKeyError

# the _target_ of Hydra's hydra/sweeper=basic, the plain -m
BASIC_SWEEPER = "hydra._internal.core_plugins.basic_sweeper.BasicSweeper"
# hydra/sweeper=sequential: the basic sweeper's grid, run in stages of seeds
SEQUENTIAL_SWEEPER = "hydra_plugins.transformer_lab_sequential.sequential_sweeper.SequentialSweeper"
GRID_SWEEPERS = (BASIC_SWEEPER, SEQUENTIAL_SWEEPER)


def split_config(config: DictConfig) -> tuple[DictConfig, DictConfig]:
    """A copy of ``config`` without its ``hydra`` node (what the job's function receives),
    and that node."""
    task = copy.deepcopy(config)
    with open_dict(task):
        del task["hydra"]
    return task, config.hydra


def expand_sweep(overrides: list[Override]) -> list[list[str]]:
    """Each job's overrides (``key=value``), as the basic sweeper expands ``overrides``:
    a key's values in the order typed, the jobs their cross product."""
    values: dict[str, list[str]] = {}  # a key typed again keeps its first place
    for override in overrides:
        key = override.get_key_element()
        if not override.is_sweep_override():
            values[key] = [f"{key}={override.get_value_element_as_str()}"]
        elif override.is_discrete_sweep():
            values[key] = [f"{key}={value}" for value in override.sweep_string_iterator()]
        else:
            raise HydraException(f"the basic sweeper does not sweep {override.input_line}")
    return [list(job) for job in itertools.product(*values.values())]


def apply_value_overrides(overrides: list[Override], config: DictConfig) -> None:
    """Apply value overrides (no config group) to ``config`` in place, by their kind as
    Hydra's config loader does: ``~key`` deletes (``~key=value`` only if it holds that
    value), ``+key=value`` adds a new key, ``++key=value`` adds or changes, ``key=value``
    changes an existing key. A ConfigCompositionException where Hydra raises one."""
    for override in overrides:
        key, value, line = override.key_or_group, override.value(), override.input_line
        if override.package is not None:
            raise ConfigCompositionException(f"{line}: no config group '{key}'")
        current = OmegaConf.select(config, key, throw_on_missing=False)
        if override.is_delete():
            if current is None or (value is not None and value != current):
                raise ConfigCompositionException(f"Could not delete from config: {line}")
            parent, _, leaf = key.rpartition(".")
            with open_dict(config):
                del (OmegaConf.select(config, parent) if parent else config)[leaf]
        elif override.is_add() and current is not None and not isinstance(value, dict | list):
            raise ConfigCompositionException(f"Could not append to config: {line} is set")
        elif override.is_add() or override.is_force_add():
            OmegaConf.update(config, key, value, merge=True, force_add=True)
        else:
            try:
                OmegaConf.update(config, key, value, merge=True)
            except (ConfigAttributeError, ConfigKeyError) as error:
                raise ConfigCompositionException(f"Could not override '{key}'") from error


def _sweep_overrides(config: DictConfig, parser: OverridesParser) -> list[Override]:
    """The sweep's overrides, parsed: its ``hydra.sweeper.params`` and the command line's;
    a sequential sweep's the seeds of its first stage too, the jobs it starts with."""
    sweeper = config.hydra.sweeper
    params = [f"{key}={value}" for key, value in (sweeper.params or {}).items()]
    if sweeper._target_ == SEQUENTIAL_SWEEPER:
        seeds = range(sweeper.first_seed, sweeper.first_seed + sweeper.first)
        params.append(f"{sweeper.seed_key}={','.join(map(str, seeds))}")
    return parser.parse_overrides([*params, *config.hydra.overrides.task])  # BasicSweeper's join


def job_overrides(config: DictConfig) -> list[list[str]] | None:
    """Each job's overrides as the basic sweeper expands them, the swept values and those
    every job shares (``["experiment=smoke", "model/norm=pre", "seed=1"]``), in launch order
    (a sequential sweep's first stage); None for another sweeper, which draws its jobs as
    it goes."""
    if config.hydra.sweeper._target_ not in GRID_SWEEPERS:
        return None
    parser = OverridesParser.create(config_loader=GlobalHydra.instance().config_loader())
    return expand_sweep(_sweep_overrides(config, parser))


def job_configs(config: DictConfig) -> Iterator[tuple[str | None, DictConfig, DictConfig]]:
    """``(name, config, hydra node)`` of each job of the basic sweeper, the job named by
    its swept overrides (``model.lr=abc,seed=1``); for another sweeper, the sweep's own
    config only, named None."""
    if config.hydra.sweeper._target_ not in GRID_SWEEPERS:
        yield None, *split_config(config)
        return
    loader = GlobalHydra.instance().config_loader()
    parser = OverridesParser.create(config_loader=loader)
    overrides = _sweep_overrides(config, parser)
    swept = {o.get_key_element() for o in overrides if o.is_sweep_override()}
    groups = {o.key_or_group for o in overrides if loader.get_group_options(o.key_or_group)}
    composed: dict[tuple[str, ...], tuple[DictConfig, DictConfig]] = {}
    for job in expand_sweep(overrides):
        parsed = parser.parse_overrides(job)
        key = tuple(o.input_line for o in parsed if o.key_or_group in groups)
        if key not in composed:
            composed[key] = split_config(loader.load_sweep_config(config, list(key)))
        task, hydra = composed[key]
        task = copy.deepcopy(task)
        apply_value_overrides([o for o in parsed if o.key_or_group not in groups], task)
        yield ",".join(o for o in job if o.split("=", 1)[0] in swept), task, hydra
