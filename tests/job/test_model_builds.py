"""The sweep check's model builds (job/checks.py ModelBuilds): jobs whose models differ only
in the run's seed share one build. Safe because the run's seed is checked first and every
seed it allows builds: the model's settings that are the seed by interpolation build at
both ends of its range. The sweep's side (job 57's bad value still refused, one build per
distinct model): tests/sweep/test_config_check.py."""

import pytest
import torch
from hydra.core.hydra_config import HydraConfig
from lightning.fabric.utilities.seed import max_seed_value, min_seed_value
from omegaconf import OmegaConf

from transformer_lab.console import SCHEMA_NOTICE
from transformer_lab.job.build import build_data_and_model
from transformer_lab.job.checks import RUN_SEED, ModelBuilds, check_config, model_settings

pytestmark = pytest.mark.filterwarnings(f"ignore:{SCHEMA_NOTICE}")


def seed_settings(node) -> list[str]:
    """The keys of ``node`` whose value is the run's seed by interpolation."""
    given = OmegaConf.to_container(node, resolve=False)
    return [key for key, value in given.items() if value == RUN_SEED]


@pytest.mark.parametrize("experiment", ["smoke", "paper_base"])
def test_every_seed_the_run_allows_builds_the_model(compose_train, experiment):
    """The run's seed passes check_run_settings in [0, 2**32 - 1]; a model whose settings
    take it builds at both ends, so leaving it out of a build's key hides no refusal."""
    for seed in (min_seed_value, max_seed_value):
        cfg = compose_train([f"experiment={experiment}", f"seed={seed}"])
        assert seed_settings(cfg.model)  # init_seed: what this test is about
        with torch.device("meta"):
            build_data_and_model(cfg)  # InvalidSetting if this seed were refused


def test_the_settings_of_a_seed_sweeps_models_are_equal(compose_train):
    first, last = (compose_train(["experiment=smoke", f"seed={s}"]) for s in (0, max_seed_value))
    assert model_settings(first.model) == model_settings(last.model)
    assert model_settings(first.model)["init_seed"] == RUN_SEED
    own = compose_train(["experiment=smoke", "model.init_seed=5"])  # not the run's seed
    assert model_settings(own.model)["init_seed"] == 5


def test_any_other_interpolation_is_resolved(compose_train):
    """A setting that follows another key differs between jobs that differ in that key."""
    settings = [
        model_settings(
            compose_train(
                [
                    "experiment=smoke",
                    "model.d_ff=${trainer.max_steps}",
                    f"trainer.max_steps={n}",
                ]
            ).model
        )
        for n in (10, 20)
    ]
    assert [s["d_ff"] for s in settings] == [10, 20]


def test_equal_settings_build_once_and_others_build_their_own(compose_train):
    models = ModelBuilds()
    for overrides in (["seed=1"], ["seed=2"], ["seed=3", "model.dropout=0.1"]):
        cfg = compose_train(["experiment=smoke", *overrides])
        check_config(cfg, HydraConfig.get(), models)
    assert len(models.built) == 2
