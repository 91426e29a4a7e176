"""config/jobs.py expands a basic sweep and applies value overrides with Hydra's public API
only; here each is held to the Hydra internals it stands in for (``BasicSweeper``'s
expansion, the config loader's override application), so a Hydra release that changes
them shows up as a failing test."""

import pytest
from hydra._internal.config_loader_impl import ConfigLoaderImpl
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import ConfigCompositionException, HydraException
from omegaconf import OmegaConf

from transformer_lab.config.jobs import BASIC_SWEEPER, apply_value_overrides, expand_sweep

PARSER = OverridesParser.create()


def test_the_basic_sweepers_target_is_the_one_named_here():
    assert f"{BasicSweeper.__module__}.{BasicSweeper.__name__}" == BASIC_SWEEPER


@pytest.mark.parametrize(
    "arguments",
    [
        ["model/norm=pre,post", "seed=0,1,2", "model.lr=1e-3"],
        ["seed=0,1,2", "data=copy,sort", "seed=5"],  # typed again: one value, first place
        ["seed=range(0,3)", "+trainer.benchmark=true", "~callbacks.samples"],
        ["model.betas=[0.9,0.99]", "tags=choice(a,'b c')", "x=shuffle(range(1,2))"],
    ],
)
def test_a_sweep_expands_to_the_jobs_of_hydras_basic_sweeper(arguments):
    overrides = PARSER.parse_overrides(arguments)
    (hydras,) = BasicSweeper.split_arguments(overrides, max_batch_size=None)
    assert expand_sweep(overrides) == hydras


def test_a_sweep_of_an_interval_is_refused_as_hydras_basic_sweeper_refuses_it():
    overrides = PARSER.parse_overrides(["model.lr=interval(0.1,1)"])
    with pytest.raises(HydraException, match="sweep"):
        BasicSweeper.split_arguments(overrides, max_batch_size=None)
    with pytest.raises(HydraException, match=r"model.lr=interval\(0.1,1\)"):
        expand_sweep(overrides)


CONFIG = {"seed": 1, "model": {"lr": 0.1, "betas": [0.9, 0.98]}, "callbacks": {"a": {"x": 1}}}
APPLIED = [
    ["seed=2", "model.lr=1e-3", "model.betas=[0.5,0.6]"],  # change
    ["+model.dropout=0.2", "+callbacks.b={x: 2}", "+model={lr: 3}"],  # add (a dict merges)
    ["++seed=3", "++model.new=1"],  # force-add: change or add
    ["~callbacks.a", "~seed=1", "~model.lr"],  # delete, with the value it must hold or any
]
REFUSED = [["unknown=1"], ["+seed=2"], ["~missing"], ["~seed=5"], ["seed@pkg=1"]]


def applied(apply, overrides):
    config = OmegaConf.create(CONFIG)
    OmegaConf.set_struct(config, True)  # as Hydra composes it
    apply(PARSER.parse_overrides(overrides), config)
    return OmegaConf.to_container(config)


@pytest.mark.parametrize("overrides", APPLIED)
def test_value_overrides_change_the_config_as_hydras_loader_does(overrides):
    hydras = applied(lambda o, c: ConfigLoaderImpl._apply_overrides_to_config(o, c), overrides)
    assert applied(apply_value_overrides, overrides) == hydras


@pytest.mark.parametrize("overrides", REFUSED)
def test_overrides_hydra_refuses_are_refused(overrides):
    with pytest.raises(ConfigCompositionException):
        applied(ConfigLoaderImpl._apply_overrides_to_config, overrides)
    with pytest.raises(ConfigCompositionException):
        applied(apply_value_overrides, overrides)
