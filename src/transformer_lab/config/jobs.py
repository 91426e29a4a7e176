"""The composed config of each job of a sweep, known before the sweep starts.

Hydra's basic sweeper (the plain ``-m``, with any launcher: basic, joblib, submitit) runs
the cross product of the command line's sweep overrides, and each launcher composes a
job's config with ``config_loader.load_sweep_config``. This expands the sweep ahead of
time with Hydra's own expansion (``BasicSweeper.split_arguments``), so that every job can
be checked before the first one makes a folder. Another sweeper (optuna) draws its jobs as
it goes: only the sweep's own config is known.

Composing costs about 0.1 s a job, too much to repeat 40 times at the start of a sweep,
and most jobs of a sweep differ in values only (``seed=0,1,2``). So a job is composed once
per combination of config groups it picks (``model/norm=pre``), and its value overrides
(``seed=1``, ``~callbacks.samples``) are applied to a copy the way Hydra applies them,
after the groups: the same config ``load_sweep_config`` makes (tested).
"""

import copy
from collections.abc import Iterator

from hydra._internal.config_loader_impl import ConfigLoaderImpl
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import DictConfig, open_dict

BASIC_SWEEPER = f"{BasicSweeper.__module__}.{BasicSweeper.__name__}"


def split_config(config: DictConfig) -> tuple[DictConfig, DictConfig]:
    """A copy of ``config`` without its ``hydra`` node (what the job's function receives),
    and that node."""
    task = copy.deepcopy(config)
    with open_dict(task):
        del task["hydra"]
    return task, config.hydra


def _sweep_overrides(config: DictConfig, parser: OverridesParser) -> list:
    """The sweep's overrides, parsed: its ``hydra.sweeper.params`` and the command line's."""
    params = [f"{key}={value}" for key, value in (config.hydra.sweeper.params or {}).items()]
    return parser.parse_overrides([*params, *config.hydra.overrides.task])  # BasicSweeper's join


def job_overrides(config: DictConfig) -> list[list[str]] | None:
    """Each job's overrides as the basic sweeper expands them, the swept values and those
    every job shares (``["experiment=smoke", "model/norm=pre", "seed=1"]``), in launch order;
    None for another sweeper, which draws its jobs as it goes."""
    if config.hydra.sweeper._target_ != BASIC_SWEEPER:
        return None
    parser = OverridesParser.create(config_loader=GlobalHydra.instance().config_loader())
    (jobs,) = BasicSweeper.split_arguments(_sweep_overrides(config, parser), max_batch_size=None)
    return jobs


def job_configs(config: DictConfig) -> Iterator[tuple[str | None, DictConfig, DictConfig]]:
    """``(name, config, hydra node)`` of each job of the basic sweeper, the job named by
    its swept overrides (``model.lr=abc,seed=1``); for another sweeper, the sweep's own
    config only, named None."""
    jobs = job_overrides(config)
    if jobs is None:
        yield None, *split_config(config)
        return
    loader = GlobalHydra.instance().config_loader()
    parser = OverridesParser.create(config_loader=loader)
    overrides = _sweep_overrides(config, parser)
    swept = {o.get_key_element() for o in overrides if o.is_sweep_override()}
    composed: dict[tuple[str, ...], tuple[DictConfig, DictConfig]] = {}
    for job in jobs:
        groups, values = [], []
        for override in parser.parse_overrides(job):
            picks_a_group = loader.repository.group_exists(override.key_or_group)
            (groups if picks_a_group else values).append(override)
        key = tuple(o.input_line for o in groups)
        if key not in composed:
            composed[key] = split_config(loader.load_sweep_config(config, list(key)))
        task, hydra = composed[key]
        task = copy.deepcopy(task)
        ConfigLoaderImpl._apply_overrides_to_config(values, task)
        yield ",".join(o for o in job if o.split("=", 1)[0] in swept), task, hydra
