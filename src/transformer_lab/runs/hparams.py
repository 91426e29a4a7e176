"""What a run's HPARAMS entry holds: the few settings that answer "which setting wins".

Not the whole config tree (about 80 constants such as ``callbacks.*.dirpath`` would push
the swept key off screen), but first the keys the job overrides (its sweep axes, ``seed``
included), then a short curated set that matters when comparing runs. Metrics are final
values plus what the final values hide: the area under the ``val/seq_acc`` curve, the steps
to reach a target, the best ``val/seq_acc``, how often the gradient was clipped, its largest
norm and the loss spikes, whether the run diverged and how long it trained.

Every HPARAMS entry of a sweep lists the same metric names, present or not: TensorBoard
takes the column list from the first run it finds, so a metric missing there (a target
that run never reached) would vanish for all. TensorBoard orders the columns by
``differs``, then by name, and ticks the first five (its ``tf-hparams-query-pane``): so
only the keys the sweep varies are marked ``differs`` (:func:`differing_keys`), not the
overrides every job of it shares (``experiment=...``, ``trainer.max_steps=...``), which
would push the swept keys off screen; and a sweep's entry lists only the keys it varies
(:func:`shown_hparams`), since a constant listed after them would be ticked as if it
varied wherever the sweep varies fewer than five.
"""

from collections.abc import Iterable

from hydra.core.override_parser.types import Override
from omegaconf import DictConfig, OmegaConf
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData
from torch.utils.tensorboard.summary import hparams
from torch.utils.tensorboard.writer import FileWriter

CURATED = (
    "data.task",
    "data.min_task_len",
    "data.max_task_len",
    "data.batch_size",
    "model.d_model",
    "model.num_heads",
    "model.num_encoder_layers",
    "model.num_decoder_layers",
    "model.d_ff",
    "model.norm",
    "model.norm_type",
    "model.pos_encoding",
    "model.ffn",
    "optim.lr",
    "optim.schedule",
    "optim.warmup_steps",
    "trainer.max_steps",
)
# top-level keys that are plumbing, not hyper-parameters, even when a job overrides them
PLUMBING = (
    "callbacks",
    "paths",
    "logger",
    "hydra",
    "ckpt_path",
    "samples",
    "task_name",
    "hypotheses",
    "outcome",
)
METRICS = (  # TensorBoard ticks the first five: the final loss and what does not saturate
    "val/loss",
    "val/seq_acc",
    "outcome/learned",  # 1 learned, 0 stalled or diverged (runs/outcome.py)
    "val/seq_acc_auc",
    "val/steps_to_target",
    "test/seq_acc",
    "val/seq_acc_best",
    "train/clip_fraction",
    "train/grad_norm_max",
    "train/loss_spikes",
    "run/diverged",
    "run/train_seconds",
)
LONG_METRICS = ("test_long/seq_acc",)  # listed when the data has a test_long split
TEXT_METRICS = ("val/bleu", "val/chrf", "test/bleu", "test/chrf")  # data read by a tokenizer

Value = int | float | str | bool


def override_key(key: str) -> str:
    """One spelling per key: ``model/norm``, ``model.norm``, ``+model.norm`` -> ``model.norm``.

    Hydra accepts a group's slash and a value's dot for the same setting; the job folder
    (see ``train.run_name``), the report and HPARAMS all name it with dots.
    """
    return key.lstrip("~+").replace("/", ".")


def _is_plumbing(key: str) -> bool:
    return key.split(".")[0] in PLUMBING or "_target_" in key


def _value(cfg: DictConfig, key: str, given: str) -> Value:
    """The resolved config's value at ``key``, or the override as typed where that is no
    single value (``data=copy`` names a whole group, ``experiment=smoke`` none)."""
    value = OmegaConf.select(cfg, key, default=None)
    if isinstance(value, bool | int | float | str):
        return value
    return given


def run_hparams(cfg: DictConfig, overrides: list[str]) -> tuple[dict[str, Value], set[str]]:
    """The job's override keys first, in the order given, then :data:`CURATED`; and the
    set of the override keys."""
    params: dict[str, Value] = {}
    for item in overrides:
        key, _, given = item.partition("=")
        key = override_key(key)
        if not _is_plumbing(key):
            params[key] = _value(cfg, key, given or "null")
    overridden = set(params)
    for key in CURATED:
        value = OmegaConf.select(cfg, key, default=None)
        if key not in params and value is not None:
            params[key] = value
    return params, overridden


def swept_keys(typed: list[Override], sweeper_params: Iterable[str] | None) -> set[str]:
    """The keys a multirun varies: those of the sweeper's ``params`` (the bundled
    experiments' grids, the Optuna search space) and of the ``typed`` sweep overrides
    (``model/norm=pre,post``), less those that the command line fixes to one value
    (``experiment=norm_comparison seed=0``): Hydra's sweepers let the command line win."""
    keys = {override_key(str(key)) for key in sweeper_params or ()}
    for override in typed:
        key = override_key(override.key_or_group)
        if override.is_sweep_override():
            keys.add(key)
        else:
            keys.discard(key)
    return keys


def differing_keys(swept: frozenset[str] | None, overridden: set[str]) -> set[str]:
    """The job's override keys to mark ``differs``: in a multirun, those the sweep varies
    (``swept``, :func:`swept_keys` of the sweep's command); in a single run (``swept``
    None), all of them, since they are what this run changed and what tells it from the
    other single runs that one ``tensorboard --logdir outputs/`` shows."""
    return overridden if swept is None else overridden & swept


def shown_hparams(
    params: dict[str, Value], differs: set[str], swept: frozenset[str] | None
) -> dict[str, Value]:
    """The hyper-parameters the HPARAMS entry lists: in a sweep the keys it varies, the
    values every job shares being in each job's config (``.hydra/``) and the sweep's
    command (``sweep.json``); in a single run (``swept`` None), or a sweep whose jobs mark
    nothing as varying, all of ``params``."""
    if swept is None or not differs:
        return params
    return {key: value for key, value in params.items() if key in differs}


def metric_names(cfg: DictConfig) -> tuple[str, ...]:
    """The metrics HPARAMS lists: :data:`METRICS`, with the outcome rule's accuracy third
    (among those TensorBoard ticks) where it is another (``val/token_acc`` in
    ``experiment=multi30k_warmup``, where ``val/seq_acc`` is near 0 for every run), then
    those of a ``test_long`` split and of text."""
    has_long = OmegaConf.select(cfg, "data.test_long_size", default=0)
    has_text = OmegaConf.select(cfg, "data.tokenizer", default=None) is not None
    rule = OmegaConf.select(cfg, "outcome.metric", default=None)
    names = METRICS if rule in (None, *METRICS) else (*METRICS[:2], rule, *METRICS[2:])
    return names + LONG_METRICS * bool(has_long) + TEXT_METRICS * has_text


def mark_differs(experiment: Summary, keys: set[str]) -> Summary:
    """The HPARAMS experiment summary with ``differs`` set on ``keys``.

    The one edit of a library's data by hand, as no public API sets ``differs``: torch's
    ``hparams()`` leaves it unset, TensorBoard's TensorFlow-free summary API
    (``hparams_config_pb``) has no such field, and its API that takes ``HParamInfo``
    messages (``summary.experiment_pb``) needs TensorFlow. So the plugin data (the
    ``HParamInfo`` messages of TensorBoard's ``plugin_data.proto``) is decoded, marked and
    encoded again; tests/runs/test_hparams_differs.py reads it back through TensorBoard's
    own reader."""
    value = experiment.value[0]
    data = HParamsPluginData.FromString(value.metadata.plugin_data.content)
    for info in data.experiment.hparam_infos:
        info.differs = info.name in keys
    value.metadata.plugin_data.content = data.SerializeToString()
    return experiment


def write_hparams(
    tensorboard_loggers,
    step: int,
    params: dict[str, Value],
    differs: set[str],
    names: tuple[str, ...],
    new_scalars: dict[str, float],
) -> None:
    """The HPARAMS session, in each of a run's TensorBoard loggers, listing ``params`` (the
    keys ``differs`` marked so) and the metrics ``names``, whose values the plugin reads
    from each name's latest scalar: Lightning logged the final ``val/*`` and ``test*/*``;
    ``new_scalars`` (best, steps to target, ...) are logged here, at the final ``step``."""
    for logger in tensorboard_loggers:
        logger.log_metrics(new_scalars, step=step)
        logger.experiment.flush()
        # a writer of our own: SummaryWriter has no public way to add a raw summary
        writer = FileWriter(logger.experiment.get_logdir())
        experiment, start, end = hparams(params, dict.fromkeys(names, 0.0))
        for summary in (mark_differs(experiment, differs), start, end):
            writer.add_summary(summary)
        writer.close()
