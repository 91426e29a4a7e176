"""What the sweep tests share: the config a multirun's callbacks get, as Hydra makes it in
the launching process, and the one-line refusal those callbacks give."""

import pytest
from hydra import initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.types import RunMode
from omegaconf import open_dict

from transformer_lab.sweep import naming, search_space, threads  # noqa: F401 (resolvers)
from transformer_lab.sweep.checks import ConfigCheck

from ..conftest import CONF_DIR


@pytest.fixture
def sweep_config():
    """``sweep_config(overrides, multirun=True)``: the config the callbacks of a multirun
    (or of a run) get, as Hydra makes it."""
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        loader = GlobalHydra.instance().config_loader()

        def compose(overrides, multirun=True):
            if not multirun:
                config = loader.load_configuration("train", overrides, run_mode=RunMode.RUN)
                with open_dict(config):
                    config.hydra.mode = RunMode.RUN  # as Hydra.run sets it
                return config
            overrides = [*overrides, "hydra.mode=MULTIRUN"]
            return loader.load_configuration("train", overrides, run_mode=RunMode.MULTIRUN)

        yield compose
    GlobalHydra.instance().clear()


def refusal(capsys, config) -> str:
    """The one line ConfigCheck prints on ``config`` before it exits 2."""
    with pytest.raises(SystemExit) as stop:
        ConfigCheck().on_multirun_start(config)
    assert stop.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    return line
