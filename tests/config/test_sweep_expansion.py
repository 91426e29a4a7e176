"""config/jobs.py expands a basic sweep with Hydra's public override parser only; here the
expansion is held to the Hydra internal it stands in for (``BasicSweeper``'s), so a Hydra
release that changes it shows up as a failing test; and the sweepers whose jobs are known
before they start are recognised by the option Hydra records."""

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException

from transformer_lab.config.jobs import expand_sweep, is_grid

PARSER = OverridesParser.create()
CONF_DIR = Path(__file__).resolve().parents[2] / "conf"


@pytest.mark.parametrize(
    ("overrides", "grid"),
    [([], True), (["hydra/sweeper=sequential"], True), (["hparams_search=optuna"], False)],
)
def test_the_sweepers_that_run_a_grid_are_recognised_by_their_option(overrides, grid):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        config = compose("train", overrides, return_hydra_config=True)
    assert is_grid(config) is grid


@pytest.mark.parametrize(
    "arguments",
    [
        ["model/norm=pre,post", "seed=0,1,2", "optim.lr=1e-3"],
        ["seed=0,1,2", "data=copy,sort", "seed=5"],  # typed again: one value, first place
        ["seed=range(0,3)", "+trainer.benchmark=true", "~callbacks.samples"],
        ["optim.betas=[0.9,0.99]", "tags=choice(a,'b c')", "x=shuffle(range(1,2))"],
    ],
)
def test_a_sweep_expands_to_the_jobs_of_hydras_basic_sweeper(arguments):
    overrides = PARSER.parse_overrides(arguments)
    (hydras,) = BasicSweeper.split_arguments(overrides, max_batch_size=None)
    assert expand_sweep(overrides) == hydras


def test_a_sweep_of_an_interval_is_refused_as_hydras_basic_sweeper_refuses_it():
    overrides = PARSER.parse_overrides(["optim.lr=interval(0.1,1)"])
    with pytest.raises(HydraException, match="sweep"):
        BasicSweeper.split_arguments(overrides, max_batch_size=None)
    with pytest.raises(HydraException, match=r"optim.lr=interval\(0.1,1\)"):
        expand_sweep(overrides)
