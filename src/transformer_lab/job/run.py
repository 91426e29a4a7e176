"""One job around a fit, in its stages in order (:func:`train`): check the settings (which
reads the checkpoint ``ckpt_path`` names, once), resolve what it resumes, take the run
folder (one process at a time, ``run_lock.py``), build (the run folder opened), fit, test
and record. A run is finished when its ``metrics.json`` is written, and that happens only
once its closing validation and its test are recorded; a job stopped or killed before
that resumes to the same ``metrics.json`` (``callbacks/last_checkpoint.py``).

The job leaves in its run folder: ``.hydra/`` (the config as given, Hydra's),
``config_resolved.yaml``, ``environment.json``, TensorBoard events (with an HPARAMS entry
carrying the real final metrics), ``checkpoints/{last,best}.ckpt`` and ``metrics.json``
(``failed.json`` for a job of a sweep that failed, ``stopped.json`` for one stopped by a
signal), each written whole or not at all (:mod:`transformer_lab.records`). Every step is
handed the job's :class:`~transformer_lab.job.context.RunContext`.
"""

import logging
import traceback
from pathlib import Path

import lightning as L
import torch
from omegaconf import DictConfig, OmegaConf
from rich.console import Console
from rich.table import Table

from transformer_lab.callbacks import InterruptCheckpoint, Interrupted, LastCheckpoint
from transformer_lab.callbacks.divergence import diverged_at_step
from transformer_lab.callbacks.fit_clock import FitClock, fit_seconds
from transformer_lab.callbacks.interrupt import signals_noted
from transformer_lab.callbacks.logger_kinds import finish_runs, log_run_config
from transformer_lab.callbacks.publishing import tensorboard_loggers
from transformer_lab.callbacks.scalar_layout import VAL_FIRST
from transformer_lab.callbacks.stop_at_target import how_fit_ended
from transformer_lab.callbacks.training_stability import training_stability
from transformer_lab.console import quiet_resume_warnings
from transformer_lab.job.build import build
from transformer_lab.job.checks import CheckedJob, checked_config
from transformer_lab.job.context import RunContext
from transformer_lab.job.ownership import check_checkpoint
from transformer_lab.job.resume import (
    RunFinished,
    check_unfinished,
    continue_in,
    discard_start,
    learned_names,
    learned_settings,
    own_last_checkpoint,
    record_stop,
    usable_checkpoint,
)
from transformer_lab.job.run_lock import owning
from transformer_lab.records import RecordNotWritten, unwritten, write_atomically, write_json
from transformer_lab.runs import environment
from transformer_lab.runs.hparams import (
    differing_keys,
    metric_names,
    run_hparams,
    shown_hparams,
    write_hparams,
)
from transformer_lab.runs.layout import (
    failure_record,
    metrics_record,
    run_folder_of,
    stop_record,
)
from transformer_lab.runs.learning_curve import CURVE_TAG, curve_metrics, read_scalars
from transformer_lab.runs.order import natural_key
from transformer_lab.runs.outcome import LEARNED, OutcomeRule
from transformer_lab.training import text_metrics
from transformer_lab.training.faults import FaultPoints, armed, fault_point

log = logging.getLogger(__name__)


def summarize(module, datamodule, metrics: dict[str, float], n_samples: int) -> None:
    console = Console()
    table = Table(title="test metrics")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key in sorted((k for k in metrics if k.startswith("test")), key=natural_key):
        table.add_row(key, f"{metrics[key]:.4f}")
    console.print(table)
    if n_samples <= 0:
        return
    batch = datamodule.sample("test", n_samples)
    predicted = module.model.generate(batch["src"].to(module.device), batch["tgt_out"].size(1))
    samples = Table(title="sample generations (test split)")
    for column in ("source", "target", "prediction"):
        samples.add_column(column)
    source, target = datamodule.src_codec.decode, datamodule.tgt_codec.decode
    for src, tgt, pred in zip(batch["src"], batch["tgt_out"], predicted[:, 1:], strict=True):
        samples.add_row(source(src.tolist()), target(tgt.tolist()), target(pred.tolist()))
    console.print(samples)


def resume_point(
    cfg: DictConfig, context: RunContext, named: Path | None
) -> tuple[Path | None, RunContext]:
    """The checkpoint to resume from (None: a fresh start) and the job's context, writing
    into the resumed run's folder, so its TensorBoard curves go on in one place: the one
    ``ckpt_path`` named (``named``, resolved by the checks); without one, a job started
    again in its own folder (a requeued SLURM job) goes on from that folder's
    ``last.ckpt``. RunFinished if that run has ended and the config asks for no more steps."""
    checkpoint = named or own_last_checkpoint(context.started_in)
    resumed_run = checkpoint and run_folder_of(checkpoint)
    if not resumed_run:
        return checkpoint, context
    stops_at_target = OmegaConf.select(cfg, "callbacks.stop_at_target.target") is not None
    check_unfinished(resumed_run, cfg.trainer.max_steps, stops_at_target)
    log.info("resuming %s from %s", resumed_run, checkpoint)
    quiet_resume_warnings()
    return checkpoint, context.resumed_in(resumed_run)


def open_run_folder(cfg: DictConfig, trainer, context: RunContext, started: dict) -> None:
    """What the run folder holds before the first step: the resolved config and the record
    of what runs it. DDP ranks share the folder; rank zero alone calls this."""
    output_dir = context.output_dir
    if trainer.world_size == 1:  # extra DDP ranks would start in Hydra's new folder
        continue_in(output_dir, context.started_in)
    stop_record(output_dir).unlink(missing_ok=True)  # a resume goes on: it stopped no more
    failure_record(output_dir).unlink(missing_ok=True)  # a job run anew: it failed no more
    write_atomically(
        output_dir / "config_resolved.yaml",
        OmegaConf.to_yaml(cfg, resolve=True),
        "the run's resolved config",
    )
    environment.write(output_dir, started)
    environment.add_to_tensorboard(tensorboard_loggers(trainer), started)
    log_run_config(trainer.loggers, run_hparams(cfg, context.overrides)[0])  # W&B's config
    log.info("outputs: %s", output_dir.resolve())
    log.info(
        "tensorboard: tensorboard --logdir %s (val/ first: %s)", output_dir.resolve(), VAL_FIRST
    )


def final_metrics(
    trainer, module, datamodule, diverged_at: int | None, tested: str | None
) -> dict[str, float]:
    """val/* of the fit's closing validation (of the final weights: the fit validates at its
    final step, see ``learning_curve.py``; a fit resumed from its end has it from its
    ``last.ckpt``) and test*/* unless the run diverged (then there is nothing more to
    evaluate: divergence is the result), with ``diverged`` 1.0 or 0.0.
    The test scores the final weights, or those of the checkpoint ``tested``
    (:func:`best_checkpoint`), which the module keeps afterwards (the sample generations)."""
    if diverged_at is None and module.validated_at_step != trainer.global_step:
        last = module.validated_at_step
        validated = f"those of step {last}" if last >= 0 else "missing"
        log.warning(
            "the fit ended at step %d without validating its final weights; val/* in "
            "metrics.json are %s",
            trainer.global_step,
            validated,
        )
    metrics = dict(module.validation_metrics)
    if diverged_at is None:
        trainer.test(
            module, datamodule=datamodule, ckpt_path=tested, weights_only=True, verbose=False
        )
    metrics |= {k: float(v) for k, v in trainer.callback_metrics.items() if k.startswith("test")}
    metrics["diverged"] = float(diverged_at is not None)  # for the sweeper's objective
    return metrics


def best_checkpoint(trainer) -> str | None:
    """The path of the checkpoint of the best ``val/seq_acc`` (``checkpoints/best.ckpt``),
    saved by the ModelCheckpoint that monitors it (``check_config`` made sure there is one),
    or None where it saved none (a ``debug=fdr`` run saves no checkpoints): then the final
    weights are tested, and ``metrics.json`` says so."""
    (callback,) = [c for c in trainer.checkpoint_callbacks if getattr(c, "monitor", None)]
    if not callback.best_model_path:
        log.warning("test_weights=best: no best.ckpt was saved; testing the final weights")
    return callback.best_model_path or None


def record_run(
    cfg, trainer, context: RunContext, metrics: dict, diverged_at, train_seconds, weights_tested
) -> dict:
    """metrics.json and the HPARAMS entry, both with what the val/seq_acc curve says (the
    best value, the area, the steps to the target), read back from the run's own events,
    how the training went (clipped steps, gradient norm, loss spikes) and how the run
    ended (``outcome``, by the config's rule); returns the curve's and training's."""
    output_dir = context.output_dir
    for logger in trainer.loggers:
        logger.save()  # the events on disk, to read the val/seq_acc curve back
    scalars = read_scalars(output_dir)
    curve = curve_metrics(scalars.get(CURVE_TAG, []), cfg.target_seq_acc)
    summary = curve | training_stability(trainer)
    record = dict(sorted((metrics | summary).items()))
    record |= {"global_step": trainer.global_step, "train_seconds": round(train_seconds, 1)}
    record["torch_threads"] = torch.get_num_threads()  # pinned in a parallel sweep
    record |= {"diverged": diverged_at is not None, "diverged_at_step": diverged_at}
    if any(key.endswith("/bleu") for key in record):  # what makes the scores comparable
        record["sacrebleu"] = text_metrics.signatures(text_metrics.effective(record))
    record |= how_fit_ended(trainer, diverged_at)
    rule = OutcomeRule.of_config(cfg)
    record |= {"outcome": rule.classify(record), "outcome_rule": rule.text}
    record |= rule.classify_at(scalars.get(rule.metric, []), diverged_at)
    record["weights_tested"] = weights_tested  # test*/* scored the last or the best weights
    write_json(metrics_record(output_dir), record, "the run's final metrics")
    run = {"run/diverged": metrics["diverged"], "run/train_seconds": train_seconds}
    run[LEARNED] = float(record["outcome"] == "learned")
    params, overridden = run_hparams(cfg, context.overrides)
    differs = differing_keys(context.swept, overridden)
    shown = shown_hparams(params, differs, context.swept)
    write_hparams(
        tensorboard_loggers(trainer),
        trainer.global_step,
        shown,
        differs,
        metric_names(cfg),
        summary | run,
    )
    return summary


def train(cfg: DictConfig, context: RunContext | None = None) -> dict[str, float]:
    """Fit, validate and test; the final metrics, ``diverged`` 1.0 or 0.0 among them (for
    a resume of a run that has ended, nothing runs: its ``metrics.json``). A stop on a
    signal raises :class:`Interrupted` after :func:`~.resume.record_stop`. ``context``:
    the job Hydra runs in this process, unless given."""
    context = context or RunContext.from_hydra()
    started = environment.collect(context.orig_argv)
    started["threads_decided_by"] = context.threads.why if context.threads else None
    checked = checked_config(cfg, context.hydra)  # its named checkpoint, read once; its data
    try:
        checkpoint, context = resume_point(cfg, context, checked.checkpoint)
    except RunFinished as finished:  # nothing to train: what the run recorded is the result
        print(finished, flush=True)
        discard_start(context.started_in, finished.run)
        return finished.metrics
    cfg = context.job_config(cfg)
    with owning(context.output_dir), signals_noted():
        try:
            return fit_and_record(cfg, checkpoint, checked, context, started)
        except Exception as error:  # a full disk: one RecordNotWritten naming what
            failed = unwritten(error, context.output_dir)
            if failed is None or failed is error:
                raise
            raise failed from error


def fit_and_record(
    cfg: DictConfig, checkpoint: Path | None, checked: CheckedJob, context: RunContext, started
) -> dict[str, float]:
    """Build, fit, test and record; a stop on a signal is recorded (rank zero)."""
    datamodule, module, trainer = build_run(cfg, checkpoint, checked, context, started)
    try:
        train_seconds = fit(trainer, module, datamodule, checkpoint)
        return score_and_record(cfg, trainer, module, datamodule, context, train_seconds)
    except Interrupted as stop:  # last.ckpt saved at the step reached (or the fit's end)
        if trainer.is_global_zero:
            record_stop(stop, context)
        raise


def build_run(
    cfg: DictConfig, checkpoint: Path | None, checked: CheckedJob, context: RunContext, started
):
    """The seeded datamodule, module and trainer (its :class:`FitClock` added: the record's
    seconds are the job's, whatever the config's callbacks), and the run folder opened
    (rank zero).
    The datamodule is the check's, built from the checkpoint ``ckpt_path`` named, if any.
    A checkpoint the job found in its own folder (a requeued job) is read here, its data
    built from it, and must be of this config's model and data, before the folder is
    written."""
    own = checkpoint is not None and checkpoint != checked.checkpoint
    where = ("hydra.run.dir", str(context.started_in))
    saved = usable_checkpoint(checkpoint, *where) if own else None
    L.seed_everything(cfg.seed, workers=True)
    if saved:  # unknown to the check: the data as that checkpoint learnt it
        datamodule, module, trainer = build(cfg, learned_settings(cfg, saved))
        check_checkpoint(saved, module, datamodule, *where, learned_names(cfg))
    else:
        datamodule, module, trainer = build(cfg, datamodule=checked.datamodule)
    trainer.callbacks.append(FitClock())
    checkpoints_last(trainer)
    if armed():  # a fault test's moments inside Lightning's loops (training/faults.py)
        trainer.callbacks.append(FaultPoints())
    if trainer.is_global_zero:
        open_run_folder(cfg, trainer, context, started)
        for path in datamodule.save_tokenizers(context.output_dir):
            log.info("tokenizer: %s", path.resolve())
    fault_point("setup")
    return datamodule, module, trainer


def checkpoints_last(trainer) -> None:
    """``last.ckpt`` and then the stop on a signal after every other callback, any
    ``ModelCheckpoint`` of the config included (Lightning keeps the config's order among
    its checkpoint callbacks): at a validation's end, ``last.ckpt`` holds what every other
    callback took from that validation, ``best.ckpt`` among them, and the stop comes once
    it is saved (``callbacks/last_checkpoint.py``)."""
    last = (LastCheckpoint, InterruptCheckpoint)
    trainer.callbacks.sort(
        key=lambda c: next((i + 1 for i, kind in enumerate(last) if isinstance(c, kind)), 0)
    )


def fit(trainer, module, datamodule, checkpoint: Path | None) -> float:
    """The fit, from ``checkpoint`` if any; the run's seconds of fit, those before the
    checkpoint included."""
    trainer.fit(module, datamodule=datamodule, ckpt_path=checkpoint, weights_only=True)
    return fit_seconds(trainer)


def score_and_record(
    cfg: DictConfig, trainer, module, datamodule, context: RunContext, train_seconds: float
) -> dict[str, float]:
    """The final metrics (the test of the last or the best weights); rank zero records
    them (metrics.json, HPARAMS) and prints them with sample generations."""
    diverged_at = diverged_at_step(trainer)
    tested = best_checkpoint(trainer) if cfg.test_weights == "best" else None
    metrics = final_metrics(trainer, module, datamodule, diverged_at, tested)
    if trainer.is_global_zero:
        weights_tested = "best" if tested else "last"
        metrics |= record_run(
            cfg, trainer, context, metrics, diverged_at, train_seconds, weights_tested
        )
        summarize(module, datamodule, metrics, cfg.samples)
        finish_runs(trainer.loggers)
        log.info("metrics: %s", context.output_dir.resolve() / "metrics.json")
    return metrics


def record_failure(error: BaseException, context: RunContext) -> None:
    """Leave ``failed.json`` in the job folder, for the sweep summary and the report; where
    it cannot be written either (the disk is full), the job's log says why, and the job counts
    as unfinished."""
    failure = {
        "error": type(error).__name__,
        "message": str(error),
        "traceback": traceback.format_exc(),
    }
    try:
        write_json(failure_record(context.started_in), failure, "why the job failed")
    except RecordNotWritten as unwritten:
        log.error("%s", unwritten)
