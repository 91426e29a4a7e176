"""Shared helpers: compose the real Hydra config the way the CLI does; run every test's
tiny models on one thread (they gain nothing from intra-op threads, and lose a lot under CPU
contention); read a run's HPARAMS entry back; an untrained checkpoint to evaluate. The
command line is started through tests/command_line.py; what several files read is built
once per test run through tests/built_once.py."""

import os
from pathlib import Path

import lightning
import pytest
import torch
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf, open_dict
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData

from transformer_lab.job import resources

from . import command_line

CONF_DIR = Path(__file__).resolve().parents[1] / "conf"
WANDB_SETTINGS = ("WANDB_MODE", "WANDB_CONFIG_DIR", "WANDB_CACHE_DIR", "WANDB_DATA_DIR")


def files_of(folder) -> dict[str, tuple[int, int]]:
    """``{relative path: (size, mtime_ns)}`` of every file under ``folder``."""
    files = (p for p in sorted(folder.rglob("*")) if p.is_file())
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in files}


def compose_run(folder: Path, overrides=()) -> DictConfig:
    """The job's config composed from ``overrides`` as the CLI composes it, the Hydra
    runtime pointed at ``folder`` (made if missing): what ``job.run.train`` reads."""
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("train", overrides=list(overrides), return_hydra_config=True)
    with open_dict(cfg):
        cfg.hydra.runtime.output_dir = str(folder)
        cfg.hydra.job.num = 0
    folder.mkdir(exist_ok=True)
    HydraConfig.instance().set_config(cfg)
    with open_dict(cfg):
        del cfg["hydra"]  # the job sees its config without the hydra node, as in the CLI
    return cfg


def eval_config(**values):
    """``conf/evaluate.yaml`` composed with ``key=value`` overrides, as the evaluate entry
    point composes it."""
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("evaluate", overrides=[f"{k}={v}" for k, v in values.items()])
    GlobalHydra.instance().clear()
    return cfg


@pytest.fixture
def untrained_checkpoint(tmp_path, lab_module) -> tuple[Path, dict]:
    """A checkpoint file as training writes it, but of an untrained model: ``(path, dict)``."""
    module = lab_module(src_vocab_size=16, tgt_vocab_size=16, d_model=16, num_heads=2)
    data = dict(task="reverse", vocab_size=16, train_size=64, val_size=8, test_size=8)
    checkpoint = {
        "state_dict": module.state_dict(),
        "hyper_parameters": dict(module.hparams),
        "datamodule_hyper_parameters": data,
        "global_step": 7,
        "pytorch-lightning_version": lightning.__version__,
    }
    path = tmp_path / "untrained.ckpt"
    torch.save(checkpoint, path)
    return path, checkpoint


@pytest.fixture
def compose_train(tmp_path):
    """``compose_train(overrides, run) -> cfg``, the Hydra runtime pointed at ``tmp_path/run``."""
    yield lambda overrides=(), run="run": compose_run(tmp_path / run, overrides)
    GlobalHydra.instance().clear()


@pytest.fixture
def large_machine(monkeypatch):
    """A machine whose memory holds any bundled experiment (paper_base on a CPU needs some
    8 GB), for the tests of the other checks, on any CI runner; the memory check's own tests
    (tests/job/test_resources.py) set the machine they check against."""
    monkeypatch.setattr(resources, "host_bytes_available", lambda: 10**12)


@pytest.fixture(autouse=True, scope="session")
def one_thread():
    """torch on one intra-op thread for every test: the models here are tiny, and the suite
    already runs a worker per core, so more threads would only wait for each other (and
    spin, burning CPU, while they wait)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(autouse=True, scope="session")
def wandb_offline(tmp_path_factory):
    """W&B (``logger=wandb``, ``logger=many``) offline for every test and the commands they
    start, whatever login the machine has, with its settings and caches in a temporary
    folder rather than the home directory."""
    home = tmp_path_factory.mktemp("wandb_home")
    saved = {name: os.environ.get(name) for name in WANDB_SETTINGS}
    os.environ.update({name: str(home) for name in WANDB_SETTINGS} | {"WANDB_MODE": "offline"})
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def one_thread_env() -> dict[str, str]:
    """The environment for a subprocess that trains tiny models: ``OMP_NUM_THREADS=1``
    (tests/command_line.py starts the project's command line with it)."""
    return command_line.one_thread_env()


@pytest.fixture(scope="session")
def lab_module():
    """``lab_module(**settings) -> Seq2SeqLitModule`` with the main job's settings (those of
    ``conf/``, the one place they are written: the constructor has no defaults), changed by
    ``settings`` named flat (``d_model=32, lr=3e-3, encoder_norm="pre"``) and placed in the
    config tree as an old checkpoint's are (:func:`current_settings`)."""
    from transformer_lab.config.renamed import current_settings
    from transformer_lab.training.module import Seq2SeqLitModule

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        main_job = OmegaConf.masked_copy(compose("train"), ["model", "optim", "compile", "seed"])
        OmegaConf.resolve(main_job)  # model.init_seed: ${seed}
        del main_job["seed"]
    GlobalHydra.instance().clear()

    def build(**settings):
        tree = OmegaConf.merge(main_job, current_settings(settings))
        return Seq2SeqLitModule(**OmegaConf.to_container(tree, resolve=True))

    return build


@pytest.fixture(scope="session")
def read_hparams():
    """``read_hparams(run folder) -> (experiment, session start)``: the run's HPARAMS entry
    as TensorBoard's hparams plugin reads it (``HParamsPluginData`` protos)."""

    def _read(run: Path):
        events = EventAccumulator(str(run), size_guidance={"tensors": 0})
        events.Reload()
        content = events.PluginTagToContent("hparams")
        data = [HParamsPluginData.FromString(raw) for raw in content.values()]
        (experiment,) = [d.experiment for d in data if d.HasField("experiment")]
        (session,) = [d.session_start_info for d in data if d.HasField("session_start_info")]
        return experiment, session

    return _read


@pytest.fixture
def compose_sweep():
    """``compose_sweep(overrides) -> cfg`` with its ``hydra`` node: the config that a
    multirun's callbacks and sweeper see in the launching process, for the ``overrides``
    typed after ``-m`` (none of them a sweep: Hydra's compose refuses those)."""

    def _compose(overrides=()):
        GlobalHydra.instance().clear()
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            return compose("train", overrides=list(overrides), return_hydra_config=True)

    yield _compose
    GlobalHydra.instance().clear()
