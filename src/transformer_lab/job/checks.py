"""The composed configuration, checked before Hydra makes a run folder.

Each value that reaches a constructor is checked by that constructor (the network, the
LightningModule, the schedule and the datamodule raise InvalidSetting), so the check builds
the datamodule and the LightningModule, on the meta device: no weights are allocated and no
data is generated (the datamodule generates its splits in ``setup``); from that build, the
memory the run would need, against the machine's (:mod:`.resources`). What belongs to the
run rather than to a part it builds is checked here: the seed, the trainer's step budget
(at most :data:`MAX_STEPS`),
validation interval and clipping, ``target_seq_acc``, ``stop_at_seq_acc``,
``test_weights``, ``optimized_metric``, DDP in a local multirun, a logger whose package is
missing, the weight averaging's settings, and the checkpoint to resume from (one of the lab,
of this config's model and data: ``ownership.py``). The Trainer,
loggers and the other callbacks are not built: they need the run folder, which does not
exist yet.

The sweep's :class:`~transformer_lab.sweep.checks.ConfigCheck` calls :func:`check_config`
before Hydra makes any folder, for a run (:func:`check_run`, whose result the job then takes
instead of checking again: one check, one read of the checkpoint) or for every job of a
sweep; :func:`transformer_lab.job.run.train` takes a run's check or checks itself
(:func:`checked_config`), so a sweep's job is checked again when it starts and a
programmatic run is checked the same way. The check's datamodule is the job's
(:class:`CheckedJob`): it holds no tensors (a datamodule reads or generates its splits in
``setup``), so the meta device leaves it as a real build would, and the job builds only its
model again, with weights. A sweep's jobs share one :class:`ModelBuilds`: building a model
costs more than the rest of a job's check, and the jobs of a seed sweep differ only in the
seed.
"""

import importlib.util
import os
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import lightning as L
import torch
from hydra.types import RunMode
from lightning.fabric.utilities.seed import max_seed_value, min_seed_value
from lightning.pytorch.accelerators import AcceleratorRegistry
from omegaconf import DictConfig, OmegaConf

from transformer_lab.config.mandatory import check_given
from transformer_lab.config.renamed import check_current_keys
from transformer_lab.config.validation import (
    ConfigError,
    InvalidSetting,
    check_choice,
    check_integer,
    check_number,
)
from transformer_lab.job.build import build_data_and_model, build_module, instantiate
from transformer_lab.job.cancelling_settings import check_stop_reaches_outcome
from transformer_lab.job.ownership import check_checkpoint
from transformer_lab.job.resources import check_resources
from transformer_lab.job.resume import (
    learned_names,
    learned_settings,
    resolve_checkpoint,
    usable_checkpoint,
)
from transformer_lab.job.threads import AUTO
from transformer_lab.runs.layout import TEST_WEIGHTS
from transformer_lab.runs.outcome import OutcomeRule
from transformer_lab.training.metric_names import check_optimized_metric
from transformer_lab.training.text_metrics import NAMES

TEXT_METRICS = tuple(f"/{name}" for name in NAMES)
RUN_SEED = "${seed}"  # a setting that is the run's seed, as the config writes it
# Beyond any budget: at a millisecond a step, faster than any step here, 10**9 steps take
# 11 days, and the schedules spread their warmup and decay over trainer.max_steps
MAX_STEPS = 10**9


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
    check_integer("trainer.max_steps", trainer.max_steps, minimum=1, maximum=MAX_STEPS)
    interval = trainer.get("val_check_interval")
    if isinstance(interval, float) and trainer.get("check_val_every_n_epoch") is not None:
        check_number("trainer.val_check_interval", interval, above=0, maximum=1)
    else:
        check_integer("trainer.val_check_interval", interval, minimum=1)
    if trainer.get("gradient_clip_val") is not None:  # null: no clipping
        check_number("trainer.gradient_clip_val", trainer.gradient_clip_val, minimum=0)


def _check_accelerator(trainer: DictConfig) -> None:
    """An accelerator this machine has (Lightning's registry says which are available), so
    that ``trainer=gpu`` on a laptop is refused up front, not by Lightning's
    MisconfigurationException after the run folder. ``gpu`` is CUDA or Apple's MPS, as
    Lightning reads it; ``auto`` is always there."""
    name = trainer.get("accelerator", "auto")
    here = [
        key
        for key in sorted(AcceleratorRegistry.available_accelerators())
        if AcceleratorRegistry[key]["accelerator"].is_available()
    ]
    allowed = ", ".join(["auto", *here])
    known = {"auto", "gpu", *AcceleratorRegistry.available_accelerators()}
    if not isinstance(name, str) or name not in known:
        raise InvalidSetting("trainer.accelerator", name, "unknown", allowed)
    wanted = {"cuda", "mps"} if name == "gpu" else {name}
    if name != "auto" and not wanted & set(here):
        raise InvalidSetting(
            "trainer.accelerator",
            name,
            "this machine has no such device",
            f"{allowed} (trainer=cpu)",
        )


# a logger's target -> (the module it needs, the extra of pyproject.toml that installs it)
OPTIONAL_LOGGERS = {
    "lightning.pytorch.loggers.MLFlowLogger": ("mlflow", "mlflow"),
    "transformer_lab.training.wandb_logger.RunWandbLogger": ("wandb", "wandb"),
}


def _check_loggers(loggers: DictConfig | None) -> None:
    """A logger whose package is not installed (an optional extra) is refused up front,
    before Lightning's ModuleNotFoundError at the build, after the run folder."""
    for key, node in (loggers or {}).items():
        module, extra = OPTIONAL_LOGGERS.get(node.get("_target_"), (None, None))
        if module and importlib.util.find_spec(module) is None:
            raise InvalidSetting(
                f"logger.{key}",
                node._target_,
                f"needs the {module} package, not installed",
                f"pip install 'transformer_lab[{extra}]', or another logger",
            )


def _check_test_weights(cfg: DictConfig) -> None:
    """``test_weights=best`` tests ``checkpoints/best.ckpt``, which the ModelCheckpoint of
    ``callbacks.model_checkpoint`` saves."""
    check_choice("test_weights", cfg.test_weights, TEST_WEIGHTS)
    if cfg.test_weights == "best" and not OmegaConf.select(cfg, "callbacks.model_checkpoint"):
        raise InvalidSetting(
            "test_weights",
            "best",
            "callbacks.model_checkpoint, which saves best.ckpt, is switched off",
            "last, or keep callbacks.model_checkpoint",
        )


def _check_threads(threads) -> None:
    """``threads``: auto, or a number of torch threads."""
    counts = isinstance(threads, int) and not isinstance(threads, bool) and threads >= 1
    if threads != AUTO and not counts:
        raise InvalidSetting("threads", threads, "not a thread count", "auto, or an integer >= 1")


def check_run_settings(cfg: DictConfig, hydra_cfg: DictConfig) -> Path | None:
    """The settings that belong to the run rather than to a part it builds; the checkpoint
    ``ckpt_path`` names (None: none)."""
    check_integer("seed", cfg.seed, min_seed_value, max_seed_value)  # seed_everything's range
    _check_trainer(cfg.trainer)
    _check_accelerator(cfg.trainer)
    check_number("target_seq_acc", cfg.target_seq_acc, above=0, maximum=1)
    if cfg.get("stop_at_seq_acc") is not None:  # null: no stop at a target
        check_number("stop_at_seq_acc", cfg.stop_at_seq_acc, above=0, maximum=1)
    _check_test_weights(cfg)
    _check_threads(cfg.get("threads", AUTO))
    direction = hydra_cfg.sweeper.get("direction") if hydra_cfg.mode == RunMode.MULTIRUN else None
    try:  # an optimizing sweeper's direction (optuna's is an enum) must suit the metric
        check_optimized_metric(cfg.optimized_metric, getattr(direction, "name", direction))
    except ValueError as error:
        raise ConfigError(str(error)) from None
    check_launcher(cfg, hydra_cfg)
    OutcomeRule.of_config(cfg)  # InvalidSetting names outcome.metric or outcome.threshold
    check_stop_reaches_outcome(cfg)
    _check_loggers(cfg.get("logger"))
    averaging = OmegaConf.select(cfg, "callbacks.averaging")
    if averaging is not None:  # its settings need no run folder, unlike the other callbacks'
        instantiate("callbacks.averaging", averaging)
    return resolve_checkpoint(cfg)  # CheckpointNotFound, a ConfigError, names ckpt_path


class ModelBuilds:
    """:func:`.build.build_module`, once per distinct setting: a call whose
    arguments equal an earlier call's, its config nodes compared by :func:`model_settings`
    (the run's seed left out) and the rest (the data's vocabulary sizes) as they are, gets
    the model that call built.

    The seed is safe to leave out: :func:`check_run_settings` has checked it (an integer in
    [0, 2**32 - 1]) before the build, and the model only seeds its initial weights with it,
    which accepts any such integer (tests/job/test_model_builds.py builds at both ends).
    Any other setting is part of the key, so a bad value is built, and refused, in the
    first job that has it.
    """

    def __init__(self):
        self.built: dict[str, object] = {}  # settings and arguments -> LightningModule
        self.activations: dict[tuple, int] = {}  # their networks' (resources.py), shared

    def __call__(self, *arguments, **given):
        settings = repr(
            (
                [_settings(value) for value in arguments],
                {name: _settings(value) for name, value in given.items()},
            )
        )
        if settings not in self.built:
            self.built[settings] = build_module(*arguments, **given)
        return self.built[settings]


def _settings(value):
    """A config node's :func:`model_settings`; any other argument as it is."""
    return model_settings(value) if OmegaConf.is_config(value) else value


def model_settings(node: DictConfig):
    """``node``'s settings, resolved, but a setting that is the run's seed by interpolation
    (``init_seed: ${seed}``) kept as ``${seed}``, so that a seed sweep's jobs have equal
    settings. Any other interpolation is resolved: its value may differ between jobs."""

    def merge(given, resolved):
        if isinstance(given, dict) and isinstance(resolved, dict):
            return {name: merge(given[name], resolved[name]) for name in given}
        if isinstance(given, list) and isinstance(resolved, list):
            return [merge(*pair) for pair in zip(given, resolved, strict=True)]
        return given if given == RUN_SEED else resolved

    given = OmegaConf.to_container(node, resolve=False)
    return merge(given, OmegaConf.to_container(node, resolve=True))


@dataclass(frozen=True)
class CheckedJob:
    """What a job's check leaves for its build: the checkpoint ``ckpt_path`` names (None:
    none), read once, and the datamodule the check built from the config and that
    checkpoint's learnt settings, which the build takes instead of building it again."""

    checkpoint: Path | None
    datamodule: L.LightningDataModule


def check_config(
    cfg: DictConfig, hydra_cfg: DictConfig, models: ModelBuilds | None = None
) -> CheckedJob:
    """The job's config ``cfg`` (without its ``hydra`` node, which is ``hydra_cfg``) can
    start a run, or a ConfigError names the first setting that cannot; what the check
    leaves for the build (:class:`CheckedJob`). ``models``: the models a sweep's earlier
    jobs built (None: build this job's)."""
    check_given(cfg, OmegaConf.to_container(hydra_cfg.runtime.choices))  # no ??? left
    check_current_keys(cfg)  # an old experiment file's model.lr: named optim.lr
    checkpoint = check_run_settings(cfg, hydra_cfg)
    # a hostile or foreign file, refused before the build; another model's or task's, after
    saved = checkpoint and usable_checkpoint(checkpoint, "ckpt_path", cfg.ckpt_path)
    learned = learned_settings(cfg, saved or None)  # the data as the resume will read it
    with torch.device("meta"):  # what the constructors check, without the weights
        datamodule, module = build_data_and_model(cfg, learned, models or build_module)
        # the memory the build would allocate
        check_resources(cfg, datamodule, module, models.activations if models else None)
    if saved:
        check_checkpoint(saved, module, datamodule, "ckpt_path", cfg.ckpt_path, learned_names(cfg))
    if cfg.optimized_metric.endswith(TEXT_METRICS) and not datamodule.reports_text:
        raise InvalidSetting(
            "optimized_metric",
            cfg.optimized_metric,
            "BLEU and chrF score reference texts, which only data=pairs has",
            "<val|test|test_long>/<loss|ppl|token_acc|seq_acc> or val/seq_acc_best",
        )
    return CheckedJob(checkpoint, datamodule)


# a run's check, by the run's config (:func:`job_key`): made by ConfigCheck before Hydra
# made the folder, taken once by the job in this process
_CHECKED_RUNS: dict[str, CheckedJob] = {}


def job_key(cfg: DictConfig) -> str:
    """What tells one job's config from another's: all of it, unresolved."""
    return OmegaConf.to_yaml(cfg, resolve=False, sort_keys=True)


def check_run(cfg: DictConfig, hydra_cfg: DictConfig) -> None:
    """:func:`check_config` of a run (not a sweep's job) before Hydra makes its folder,
    its result kept for the job that runs next in this process (:func:`checked_config`)."""
    _CHECKED_RUNS[job_key(cfg)] = check_config(cfg, hydra_cfg)


def checked_config(cfg: DictConfig, hydra_cfg: DictConfig) -> CheckedJob:
    """The check of this very config :func:`check_run` made before the folder (a run from
    the command line: checked once), else :func:`check_config` now (a sweep's job, whose
    sweep-start check may be hours old, or a programmatic run)."""
    key = job_key(cfg)
    if key in _CHECKED_RUNS:
        return _CHECKED_RUNS.pop(key)
    return check_config(cfg, hydra_cfg)


def refuse(error: ConfigError, job: str | None = None) -> NoReturn:
    """The one line a configuration error gets, and exit status 2; with
    ``HYDRA_FULL_ERROR=1``, its traceback before it (what raised it, and why)."""
    if os.environ.get("HYDRA_FULL_ERROR") == "1":
        traceback.print_exception(error)
    where = f" (sweep job: {job})" if job else ""
    print(f"error: {error}{where}", file=sys.stderr)
    sys.exit(2)
