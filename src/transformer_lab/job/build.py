"""The parts of a job, built from its config: datamodule, LightningModule (from the
``model``, ``optim`` and ``compile`` settings), callbacks, loggers and trainer.

A setting a constructor refuses becomes one :class:`ConfigError` naming its key; any other
exception from the project's own code is a bug and keeps its traceback (:func:`instantiate`).
"""

import inspect

import hydra
from hydra.errors import InstantiationException
from omegaconf import DictConfig, OmegaConf

from transformer_lab.config.typed import check_complete
from transformer_lab.config.validation import ConfigError, InvalidSetting
from transformer_lab.model.config import TransformerConfig
from transformer_lab.training.module import Seq2SeqLitModule
from transformer_lab.training.optim import OptimConfig

PACKAGE = __package__.split(".")[0]  # transformer_lab: whose constructors' errors are ours


def instantiate(key: str, node: DictConfig, **kwargs):
    """``hydra.utils.instantiate`` whose refusal of a setting is one ConfigError naming it.

    A refusal is an InvalidSetting from the project's own constructors, a key the target
    does not take, or a ValueError or TypeError from a library's constructor (Lightning
    checks the Trainer's arguments that way; its errors are not ours to fix). Any other
    exception, a ValueError or TypeError from the project's own code among them, is a bug
    and keeps its traceback.
    """
    _check_keys(key, node, given=kwargs)
    try:
        return hydra.utils.instantiate(node, _convert_="all", **kwargs)
    except InstantiationException as error:
        cause = error.__cause__
        if isinstance(cause, InvalidSetting):
            raise cause.within(key) from None
        ours = str(node.get("_target_", "")).startswith(f"{PACKAGE}.")
        if isinstance(cause, ValueError | TypeError) and not ours:
            raise ConfigError(f"{key}: {cause}") from None
        raise


def _check_keys(key: str, node: DictConfig, given: dict) -> None:
    """InvalidSetting for a key the target's constructor does not take (``+model.qk=1``),
    or for one it needs that the config lacks (``~model.dropout``), both of which Python
    would refuse with a TypeError before the constructor runs. ``given``: the arguments
    passed besides the config's."""
    target = hydra.utils.get_object(node._target_)
    parameters = inspect.signature(target).parameters
    settings = OmegaConf.to_container(node, resolve=False)
    for name, parameter in parameters.items():
        by_name = parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)
        needed = by_name and parameter.default is parameter.empty
        if needed and name not in settings and name not in given:
            reason = f"missing ({target.__name__} has no default for it)"
            raise InvalidSetting(f"{key}.{name}", None, reason, "a value in the config")
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return
    for name, value in settings.items():
        if not name.startswith("_") and name not in parameters:
            reason = f"{target.__name__} takes no such setting"
            allowed = ", ".join(p for p in parameters if p != "self")
            raise InvalidSetting(f"{key}.{name}", value, reason, allowed)


def vocab_sizes(model: DictConfig, datamodule) -> dict[str, int]:
    """The model's vocabulary sizes the config leaves to the data (``null``): the data's.
    A size the config gives must hold the data's ids."""
    sizes = {}
    for key, needed in (
        ("src_vocab_size", datamodule.src_vocab_size),
        ("tgt_vocab_size", datamodule.tgt_vocab_size),
    ):
        given = model.get(key)
        if given is None:
            sizes[key] = needed
        elif isinstance(given, int) and given < needed:
            reason = f"smaller than the data's vocabulary ({needed} ids)"
            raise InvalidSetting(f"model.{key}", given, reason, f">= {needed}, or null")
    return sizes


def positions_for_data(cfg: DictConfig) -> dict:
    """The model's positions (``model.max_len``) for data that keeps only what fits them
    (``data=pairs``: :attr:`.SplitsDataModule.fits_model_positions`), passed here rather
    than read back by the data's config."""
    cls = hydra.utils.get_class(cfg.data._target_)
    return {"model_positions": cfg.model.max_len} if cls.fits_model_positions else {}


def build_module(model: DictConfig, optim: DictConfig, compile, sizes: dict):
    """The LightningModule from the run's ``model`` and ``optim`` nodes and its ``compile``,
    the vocabularies the config leaves to the data given as ``sizes``; or InvalidSetting
    naming the setting by its key. A run's config sets every field
    (:func:`check_complete`)."""
    network = OmegaConf.to_container(model, resolve=True) | sizes
    optimisation = OmegaConf.to_container(optim, resolve=True)
    for key, settings, cls in (
        ("model", network, TransformerConfig),
        ("optim", optimisation, OptimConfig),
    ):
        try:
            check_complete(cls, settings)
        except InvalidSetting as error:
            raise error.within(key) from None
    return Seq2SeqLitModule(model=network, optim=optimisation, compile=compile)


def build_data_and_model(
    cfg: DictConfig, learned: dict | None = None, build_model=build_module, datamodule=None
):
    """The datamodule and the LightningModule, or ConfigError; the model's vocabularies are
    the data's (:func:`vocab_sizes`), and it must have a position for every token of the
    data's longest sequence. ``learned``: the data's learnt settings (a tokenizer) to take
    instead of learning them, from the checkpoint a run resumes
    (:func:`.resume.learned_settings`). ``build_model``: :func:`build_module`, or the sweep
    check's :class:`.checks.ModelBuilds`, which builds a model once for the jobs whose
    models differ only in the run's seed. ``datamodule``: the one the job's check built
    from this config and ``learned`` (:class:`.checks.CheckedJob`), or None to build it."""
    if datamodule is None:
        datamodule = instantiate("data", cfg.data, **positions_for_data(cfg), **(learned or {}))
    sizes = vocab_sizes(cfg.model, datamodule)
    module = build_model(cfg.model, cfg.optim, cfg.compile, sizes)
    max_len = module.model.config.max_len
    if datamodule.missing_positions(max_len):
        longest = datamodule.max_seq_len
        raise InvalidSetting(
            "model.max_len",
            max_len,
            f"shorter than the longest sequence of the data incl. BOS/EOS ({longest})",
            f"max_len >= {longest}",
        )
    return datamodule, module


def build(cfg: DictConfig, learned: dict | None = None, datamodule=None):
    """Datamodule, module and a trainer with the config's callbacks and loggers, or
    ConfigError. ``cfg`` is the job's config (:meth:`.RunContext.job_config`), its
    ``paths.output_dir`` the folder the job writes to; ``learned`` and ``datamodule`` as
    for :func:`build_data_and_model`."""
    datamodule, module = build_data_and_model(cfg, learned, datamodule=datamodule)
    callbacks = [
        instantiate(f"callbacks.{key}", node)
        for key, node in (cfg.get("callbacks") or {}).items()
        if node is not None
    ]
    loggers = [
        instantiate(f"logger.{key}", node) for key, node in (cfg.get("logger") or {}).items()
    ]
    trainer = instantiate("trainer", cfg.trainer, callbacks=callbacks, logger=loggers or False)
    return datamodule, module, trainer
