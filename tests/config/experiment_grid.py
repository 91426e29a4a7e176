"""A bundled experiment composed as its sweep composes it, and the jobs of its grid: what the
tests of a pre-registered design (test_regime.py, test_multi30k_warmup.py) check."""

from pathlib import Path

from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import DictConfig

from transformer_lab.config.jobs import expand_sweep

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"


def composed(experiment: str, *overrides: str) -> DictConfig:
    """``experiment=<experiment>`` with ``overrides``, its ``hydra`` node included."""
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("train", [f"experiment={experiment}", *overrides], return_hydra_config=True)
    GlobalHydra.instance().clear()
    return cfg


def grid(cfg: DictConfig) -> list[list[str]]:
    """Each job of the sweeper's grid (``hydra.sweeper.params``) as its overrides."""
    params = cfg.hydra.sweeper.params
    parsed = OverridesParser.create().parse_overrides([f"{k}={v}" for k, v in params.items()])
    return expand_sweep(parsed)
