"""experiment=norm_comparison sweeps what docs/experiments.md's table says it compares."""

from pathlib import Path

from omegaconf import OmegaConf

from transformer_lab.job.build import build

CONF = Path(__file__).resolve().parents[2] / "conf" / "experiment" / "norm_comparison.yaml"


def test_the_sweep_crosses_norm_depth_warmup_and_two_seeds():
    params = OmegaConf.load(CONF).hydra.sweeper.params
    assert {key: str(value).split(",") for key, value in params.items()} == {
        "model/norm": ["post", "pre"],
        "depth": ["2", "6"],
        "optim.schedule": ["constant", "linear_warmup"],
        "seed": ["0", "1"],
    }


def test_depth_sets_both_stacks_and_the_learning_rate_is_large(compose_train):
    _, module, trainer = build(compose_train(["experiment=norm_comparison", "depth=6"]))
    network, optim = module.model.config, module.optim
    assert (network.num_encoder_layers, network.num_decoder_layers) == (6, 6)
    assert (optim.lr, optim.schedule, trainer.max_steps) == (3e-3, "constant", 600)
