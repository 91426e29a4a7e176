"""The composed config of each job of a sweep, known before the sweep starts.

Hydra's basic sweeper (the plain ``-m``, with any launcher: basic, joblib, submitit) runs
the cross product of the command line's sweep overrides, and each launcher composes a
job's config with ``config_loader.load_sweep_config``. This expands the sweep ahead
of time the way that sweeper does (one list of values per key, a later override of a key
replacing an earlier one in its place, their cross product in order), through Hydra's public
override parser, so that every job can be checked before the first one makes a folder.
Another sweeper (optuna) draws its jobs as it goes: only the sweep's own config is known.

Composing a job through ``load_sweep_config`` costs too much to repeat for every job at
the start of a sweep, and most jobs of a sweep differ only in the values of swept keys
(``seed=0,1,2``). So Hydra composes the first job of each combination of the other
overrides (config groups, deletions, additions, values every job shares), and its siblings
are that config with their swept values set as Hydra sets a changed value
(``OmegaConf.update`` of the parsed value; :func:`set_on_copy` says when that holds). The
configs are those ``load_sweep_config`` makes (tested). Siblings share one config object,
each job's values set on it in turn: a copy per job cost more than checking the job.
"""

import copy
import itertools
from collections.abc import Iterator

from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import HydraException
from omegaconf import DictConfig, OmegaConf, open_dict

# hydra/sweeper=sequential: the basic sweeper's grid, run in stages of seeds
SEQUENTIAL_SWEEPER = "hydra_plugins.transformer_lab_sequential.sequential_sweeper.SequentialSweeper"
# the hydra/sweeper options that run a grid: basic (the plain -m) and sequential
GRID_SWEEPERS = ("basic", "sequential")


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


def _sweep_overrides(config: DictConfig, parser: OverridesParser) -> list[Override]:
    """The sweep's overrides, parsed: its ``hydra.sweeper.params`` and the command line's;
    a sequential sweep's the seeds of its first stage too, the jobs it starts with."""
    sweeper = config.hydra.sweeper
    params = [f"{key}={value}" for key, value in (sweeper.params or {}).items()]
    if sweeper._target_ == SEQUENTIAL_SWEEPER:
        seeds = range(sweeper.first_seed, sweeper.first_seed + sweeper.first)
        params.append(f"{sweeper.seed_key}={','.join(map(str, seeds))}")
    return parser.parse_overrides([*params, *config.hydra.overrides.task])  # BasicSweeper's join


def is_grid(config: DictConfig) -> bool:
    """Whether the sweep runs a grid known before it starts (hydra/sweeper=basic or
    sequential), by the option Hydra records as chosen."""
    return config.hydra.runtime.choices.get("hydra/sweeper") in GRID_SWEEPERS


def job_overrides(config: DictConfig) -> list[list[str]] | None:
    """Each job's overrides as the basic sweeper expands them, the swept values and those
    every job shares (``["experiment=smoke", "model/norm=pre", "seed=1"]``), in launch order
    (a sequential sweep's first stage); None for another sweeper, which draws its jobs as
    it goes."""
    if not is_grid(config):
        return None
    parser = OverridesParser.create(config_loader=GlobalHydra.instance().config_loader())
    return expand_sweep(_sweep_overrides(config, parser))


def set_on_copy(override: Override, job: list[Override], swept: set[str], groups: set[str]) -> bool:
    """Whether ``override`` (of ``job``) can be set on a copy of a sibling's config: a swept
    change of a key's value (not a config group, no ``~``, ``+`` or ``++``) to a plain value
    (a dict or list would merge), and no other override of the job names a key in or
    around it, so the order Hydra applies them in cannot matter."""
    key = override.key_or_group
    apart = all(
        not (
            f"{o.key_or_group}.".startswith(f"{key}.") or f"{key}.".startswith(f"{o.key_or_group}.")
        )
        for o in job
        if o is not override
    )
    return (
        override.get_key_element() in swept
        and not (override.is_delete() or override.is_add() or override.is_force_add())
        and not isinstance(override.value(), dict | list)
        and key not in groups
        and apart
    )


def job_configs(config: DictConfig) -> Iterator[tuple[str | None, DictConfig, DictConfig]]:
    """``(name, config, hydra node)`` of each job of the basic sweeper, the job named by
    its swept overrides (``optim.lr=abc,seed=1``); for another sweeper, the sweep's own
    config only, named None. A job's config is its siblings' object with its own values set,
    so it holds until the next job is yielded: a caller that keeps it keeps a copy."""
    if not is_grid(config):
        yield None, *split_config(config)
        return
    loader = GlobalHydra.instance().config_loader()
    parser = OverridesParser.create(config_loader=loader)
    overrides = _sweep_overrides(config, parser)
    swept = {o.get_key_element() for o in overrides if o.is_sweep_override()}
    groups = {o.key_or_group for o in overrides if loader.get_group_options(o.key_or_group)}
    composed: dict[tuple[str, ...], tuple[DictConfig, DictConfig]] = {}  # by the other overrides
    for job in expand_sweep(overrides):
        parsed = parser.parse_overrides(job)
        values = [o for o in parsed if set_on_copy(o, parsed, swept, groups)]
        others = tuple(o.input_line for o in parsed if o not in values)
        if others not in composed:
            composed[others] = split_config(loader.load_sweep_config(config, job))
        task, hydra = composed[others]
        # every sibling sets the same keys, so none keeps another's; an untyped (YAML) key
        # takes any plain value
        for override in values:
            OmegaConf.update(task, override.key_or_group, override.value(), merge=True)
        yield ",".join(o for o in job if o.split("=", 1)[0] in swept), task, hydra
