"""The composed configuration, checked before Hydra makes a run folder.

Each value that reaches a constructor is checked by that constructor (the network, the
LightningModule, the schedule and the datamodule raise InvalidSetting), so the check builds
the datamodule and the LightningModule, on the meta device: no weights are allocated and no
data is generated (the datamodule generates its splits in ``setup``). What belongs to the
run rather than to a part it builds is checked here: the seed, the trainer's step budget,
validation interval and clipping, ``target_seq_acc``, ``optimized_metric``, DDP in a local
multirun, and the checkpoint to resume from. The Trainer, loggers and callbacks are not
built: they need the run folder, which does not exist yet.

:class:`ConfigCheck` is a Hydra callback: Hydra calls ``on_run_start`` before ``run_job``
makes the run folder, and ``on_multirun_start`` before the sweeper makes the sweep folder,
so a bad value leaves nothing behind. ``train.train`` calls :func:`check_config` as well,
so a programmatic run is checked the same way.
"""

import inspect
import sys
from typing import NoReturn

import hydra
import torch
from hydra.errors import InstantiationException
from hydra.experimental.callback import Callback
from hydra.types import RunMode
from lightning.fabric.utilities.seed import max_seed_value, min_seed_value
from omegaconf import DictConfig, OmegaConf

from transformer_lab.objective import check_optimized_metric
from transformer_lab.resume import resolve_checkpoint
from transformer_lab.search_space import check_warmup_range
from transformer_lab.sweep_jobs import job_configs, split_config
from transformer_lab.validation import (
    ConfigError,
    InvalidSetting,
    check_integer,
    check_number,
)


def instantiate(key: str, node: DictConfig, **kwargs):
    """``hydra.utils.instantiate`` whose refusal of a setting is one ConfigError naming it.

    A refusal is an InvalidSetting from the project's own constructors, a key the target
    does not take, or a ValueError or TypeError from a library's constructor (Lightning
    checks the Trainer's arguments that way; its errors are not ours to fix). Any other
    exception, a ValueError or TypeError from the project's own code among them, is a bug
    and keeps its traceback.
    """
    _check_keys(key, node)
    try:
        return hydra.utils.instantiate(node, _convert_="all", **kwargs)
    except InstantiationException as error:
        cause = error.__cause__
        if isinstance(cause, InvalidSetting):
            raise cause.within(key) from None
        ours = str(node.get("_target_", "")).startswith(f"{__package__}.")
        if isinstance(cause, ValueError | TypeError) and not ours:
            raise ConfigError(f"{key}: {cause}") from None
        raise


def _check_keys(key: str, node: DictConfig) -> None:
    """InvalidSetting for a key the target's constructor does not take (``+model.qk=1``),
    which Python would refuse with a TypeError before the constructor runs."""
    target = hydra.utils.get_object(node._target_)
    parameters = inspect.signature(target).parameters
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return
    settings = OmegaConf.to_container(node, resolve=False)
    for name, value in settings.items():
        if not name.startswith("_") and name not in parameters:
            reason = f"{target.__name__} takes no such setting"
            allowed = ", ".join(p for p in parameters if p != "self")
            raise InvalidSetting(f"{key}.{name}", value, reason, allowed)


def build_data_and_model(cfg: DictConfig):
    """The datamodule and the LightningModule, or ConfigError; the model must have a
    position for every token of the data's longest sequence."""
    datamodule = instantiate("data", cfg.data)
    module = instantiate("model", cfg.model)
    if datamodule.missing_positions(module.hparams.max_len):
        longest = datamodule.max_seq_len
        raise InvalidSetting(
            "model.max_len",
            module.hparams.max_len,
            f"shorter than the longest sequence of the data incl. BOS/EOS ({longest})",
            f"max_len >= {longest}",
        )
    return datamodule, module


def check_launcher(cfg: DictConfig, hydra_cfg: DictConfig) -> None:
    """A local multirun cannot host DDP: Lightning starts each extra rank by re-running
    the command line, which would re-run the whole sweep. On SLURM the ranks are SLURM
    tasks, so a ``hydra/launcher=slurm`` sweep is fine."""
    strategy = cfg.trainer.get("strategy", "auto")
    distributed = strategy not in ("auto", "single_device") and cfg.trainer.devices != 1
    on_slurm = "slurm" in str(hydra_cfg.launcher.get("_target_", "")).lower()
    if hydra_cfg.mode == RunMode.MULTIRUN and distributed and not on_slurm:
        raise InvalidSetting(
            "trainer.strategy",
            strategy,
            f"with trainer.devices={cfg.trainer.devices} in a local multirun",
            "a single run, or a sweep with hydra/launcher=slurm",
        )


def _check_trainer(trainer: DictConfig) -> None:
    """The lab's runs are bounded by steps (``max_epochs: -1``) and validate every
    ``val_check_interval`` steps across epochs (``check_val_every_n_epoch: null``); with
    ``check_val_every_n_epoch`` set, Lightning also takes a fraction of an epoch."""
    check_integer("trainer.max_steps", trainer.max_steps, minimum=1)
    interval = trainer.get("val_check_interval")
    if isinstance(interval, float) and trainer.get("check_val_every_n_epoch") is not None:
        check_number("trainer.val_check_interval", interval, above=0, maximum=1)
    else:
        check_integer("trainer.val_check_interval", interval, minimum=1)
    if trainer.get("gradient_clip_val") is not None:  # null: no clipping
        check_number("trainer.gradient_clip_val", trainer.gradient_clip_val, minimum=0)


def check_run_settings(cfg: DictConfig, hydra_cfg: DictConfig) -> None:
    """The settings that belong to the run rather than to a part it builds."""
    check_integer("seed", cfg.seed, min_seed_value, max_seed_value)  # seed_everything's range
    _check_trainer(cfg.trainer)
    check_number("target_seq_acc", cfg.target_seq_acc, above=0, maximum=1)
    direction = hydra_cfg.sweeper.get("direction") if hydra_cfg.mode == RunMode.MULTIRUN else None
    try:  # an optimizing sweeper's direction (optuna's is an enum) must suit the metric
        check_optimized_metric(cfg.optimized_metric, getattr(direction, "name", direction))
    except ValueError as error:
        raise ConfigError(str(error)) from None
    check_launcher(cfg, hydra_cfg)
    resolve_checkpoint(cfg)  # CheckpointNotFound, a ConfigError, names ckpt_path


def check_config(cfg: DictConfig, hydra_cfg: DictConfig) -> None:
    """The job's config ``cfg`` (without its ``hydra`` node, which is ``hydra_cfg``) can
    start a run, or a ConfigError names the first setting that cannot."""
    check_run_settings(cfg, hydra_cfg)
    with torch.device("meta"):  # what the constructors check, without the weights
        build_data_and_model(cfg)


def refuse(error: ConfigError, job: str | None = None) -> NoReturn:
    """The one line a configuration error gets, and exit status 2."""
    where = f" (sweep job: {job})" if job else ""
    print(f"error: {error}{where}", file=sys.stderr)
    sys.exit(2)


class ConfigCheck(Callback):
    """Checks the config of a run, or of every job of a sweep, before any folder exists.

    Hydra turns a callback's exception into a warning and goes on, so this one exits.
    """

    def on_run_start(self, config: DictConfig, **kwargs) -> None:
        try:
            check_config(*split_config(config))
        except ConfigError as error:
            refuse(error)

    def on_multirun_start(self, config: DictConfig, **kwargs) -> None:
        for job, job_config, hydra_cfg in job_configs(config):
            try:
                check_config(job_config, hydra_cfg)
            except ConfigError as error:
                refuse(error, job)
        if "optuna" in config.hydra.sweeper._target_:
            try:
                check_warmup_range(config)  # the search space, which no job config shows
            except ConfigError as error:
                refuse(error)
