"""The main job: ``python -m transformer_lab.train [overrides]``.

Composes ``conf/train.yaml``, checks the whole configuration before anything trains,
fits and tests, and leaves in the run folder: ``.hydra/`` (the config as given),
``config_resolved.yaml``, TensorBoard events (with an HPARAMS entry carrying the real final
metrics), ``checkpoints/{last,best}.ckpt`` and ``metrics.json``.
"""

import hashlib
import json
import logging
import re
import sys
import time
import traceback
from pathlib import Path

import hydra
import lightning as L
import torch
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf
from rich.console import Console
from rich.table import Table

from transformer_lab import (
    environment,
    parallel_jobs,  # also registers ${sweep_n_jobs:}, before Hydra composes
    search_space,  # noqa: F401 (it registers ${warmup_range:}, for the optuna search space)
)
from transformer_lab.callbacks import Interrupted, diverged_at_step
from transformer_lab.config_check import build_data_and_model, check_config, instantiate, refuse
from transformer_lab.console import natural_key, quiet_library_notices
from transformer_lab.hparams import differing_keys, metric_names, run_hparams, write_hparams
from transformer_lab.learning_curve import CURVE_TAG, curve_metrics, read_scalars
from transformer_lab.objective import objective, worst_value
from transformer_lab.resume import (
    RunFinished,
    check_unfinished,
    continue_in,
    discard_start,
    quiet_resume_warnings,
    resolve_checkpoint,
    say_interrupted,
)
from transformer_lab.run_folder import run_folder_of
from transformer_lab.tokens import detokenize
from transformer_lab.validation import ConfigError

log = logging.getLogger(__name__)


def run_name(override_dirname: str) -> str:
    """A sweep job's folder name from its overrides: ``model/norm=pre`` -> ``model.norm=pre``.

    Slashes would nest folders; a deletion reads as typed (Hydra writes ``~key=null``);
    names past 200 characters keep a readable prefix and a hash of the whole, so distinct
    jobs never share a folder.
    """
    name = re.sub(r"(^|,)(~[^=,]+)=null(?=,|$)", r"\1\2", override_dirname)
    name = name.replace("/", ".") or "defaults"
    if len(name) > 200:
        name = f"{name[:180]}-{hashlib.sha1(name.encode()).hexdigest()[:12]}"
    return name


OmegaConf.register_new_resolver("run_name", run_name, replace=True)


def build(cfg: DictConfig):
    """Instantiate datamodule, module, callbacks, loggers and trainer, or raise ConfigError."""
    datamodule, module = build_data_and_model(cfg)
    callbacks = [instantiate(f"callbacks.{k}", c)
                 for k, c in (cfg.get("callbacks") or {}).items() if c is not None]  # fmt: skip
    loggers = [instantiate(f"logger.{k}", c) for k, c in (cfg.get("logger") or {}).items()]
    trainer = instantiate("trainer", cfg.trainer, callbacks=callbacks, logger=loggers or False)
    return datamodule, module, trainer


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
    for src, tgt, pred in zip(batch["src"], batch["tgt_out"], predicted[:, 1:], strict=True):
        samples.add_row(*(detokenize(t.tolist()) for t in (src, tgt, pred)))
    console.print(samples)


def resume_point(cfg: DictConfig, output_dir: Path) -> tuple[Path | None, Path]:
    """The checkpoint to resume from (None: a fresh start) and the folder the run writes
    to: the resumed run's own, so its TensorBoard curves go on in one place. RunFinished
    if that run has ended and the config asks for no more steps."""
    checkpoint = resolve_checkpoint(cfg)
    resumed_run = checkpoint and run_folder_of(checkpoint)
    if not resumed_run:
        return checkpoint, output_dir
    check_unfinished(resumed_run, cfg.trainer.max_steps)
    cfg.paths.output_dir = str(resumed_run)
    log.info("resuming %s from %s", resumed_run, checkpoint)
    quiet_resume_warnings()
    return checkpoint, resumed_run


def open_run_folder(cfg: DictConfig, trainer, output_dir: Path, started_in: Path, started) -> None:
    """What the run folder holds before the first step: the resolved config and the record
    of what runs it. DDP ranks share the folder; rank zero alone calls this."""
    if trainer.world_size == 1:  # extra DDP ranks would start in Hydra's new folder
        continue_in(output_dir, started_in)
    (output_dir / "config_resolved.yaml").write_text(OmegaConf.to_yaml(cfg, resolve=True))
    environment.write(output_dir, started)
    environment.add_to_tensorboard(trainer.loggers, started)
    log.info("outputs: %s", output_dir.resolve())
    log.info("tensorboard: tensorboard --logdir %s", output_dir.resolve())


def final_metrics(trainer, module, datamodule, diverged_at: int | None) -> dict[str, float]:
    """val/* of the fit's closing validation (of the final weights: the fit validates at its
    final step, see ``learning_curve.py``) and test*/* unless the run diverged (then there
    is nothing more to evaluate: divergence is the result), with ``diverged`` 1.0 or 0.0."""
    if diverged_at is None and module.validated_at_step != trainer.global_step:
        last = module.validated_at_step
        validated = f"those of step {last}" if last >= 0 else "missing"
        log.warning(
            "the fit ended at step %d without validating its final weights; val/* in "
            "metrics.json are %s",
            trainer.global_step,
            validated,
        )
    metrics = {k: float(v) for k, v in trainer.callback_metrics.items() if k.startswith("val/")}
    if diverged_at is None:
        trainer.test(module, datamodule=datamodule, verbose=False)
    metrics |= {k: float(v) for k, v in trainer.callback_metrics.items() if k.startswith("test")}
    metrics["diverged"] = float(diverged_at is not None)  # for the sweeper's objective
    return metrics


def record_run(cfg, trainer, output_dir: Path, metrics: dict, diverged_at, train_seconds) -> dict:
    """metrics.json and the HPARAMS entry, both with what the val/seq_acc curve says (the
    best value, the steps to the target), read back from the run's own events; returns
    those curve metrics."""
    for logger in trainer.loggers:
        logger.save()  # the events on disk, to read the val/seq_acc curve back
    curve = curve_metrics(read_scalars(output_dir).get(CURVE_TAG, []), cfg.target_seq_acc)
    record = dict(sorted((metrics | curve).items()))
    record |= {"global_step": trainer.global_step, "train_seconds": round(train_seconds, 1)}
    record["torch_threads"] = torch.get_num_threads()  # pinned in a parallel sweep
    record |= {"diverged": diverged_at is not None, "diverged_at_step": diverged_at}
    (output_dir / "metrics.json").write_text(json.dumps(record, indent=2) + "\n")
    run = {"run/diverged": metrics["diverged"], "run/train_seconds": train_seconds}
    params, overridden = run_hparams(cfg, HydraConfig.get().overrides.task)
    differs = differing_keys(HydraConfig.get(), overridden)
    write_hparams(trainer, params, differs, metric_names(cfg), curve | run)
    return curve


def train(cfg: DictConfig) -> dict[str, float]:
    """Fit, validate and test; the final metrics, ``diverged`` 1.0 or 0.0 among them (for
    a resume of a run that has ended, nothing runs: its ``metrics.json``)."""
    started = environment.collect()
    started_in = Path(HydraConfig.get().runtime.output_dir)
    check_config(cfg, HydraConfig.get())
    try:
        checkpoint, output_dir = resume_point(cfg, started_in)
    except RunFinished as finished:  # nothing to train: what the run recorded is the result
        print(finished, flush=True)
        discard_start(started_in, finished.run)
        return finished.metrics
    L.seed_everything(cfg.seed, workers=True)
    datamodule, module, trainer = build(cfg)
    if trainer.is_global_zero:
        open_run_folder(cfg, trainer, output_dir, started_in, started)

    start = time.perf_counter()
    try:
        trainer.fit(module, datamodule=datamodule, ckpt_path=checkpoint, weights_only=True)
    except Interrupted as stop:  # Ctrl-C or SIGTERM, last.ckpt saved at the step reached
        say_interrupted(stop, trainer.is_global_zero)
        raise
    train_seconds = time.perf_counter() - start
    diverged_at = diverged_at_step(trainer)
    metrics = final_metrics(trainer, module, datamodule, diverged_at)
    if trainer.is_global_zero:
        metrics |= record_run(cfg, trainer, output_dir, metrics, diverged_at, train_seconds)
        summarize(module, datamodule, metrics, cfg.samples)
        log.info("metrics: %s", output_dir.resolve() / "metrics.json")
    return metrics


def record_failure(error: BaseException) -> None:
    """Leave ``failed.json`` in the job folder, for the sweep summary and the report."""
    output_dir = Path(HydraConfig.get().runtime.output_dir)
    failure = {
        "error": type(error).__name__,
        "message": str(error),
        "traceback": traceback.format_exc(),
    }
    (output_dir / "failed.json").write_text(json.dumps(failure, indent=2) + "\n")


@hydra.main(version_base="1.3", config_path="pkg://transformer_lab.conf", config_name="train")
def main(cfg: DictConfig) -> float:
    """Run one job. In a sweep a failing job is recorded and the sweep goes on; the value
    of ``optimized_metric`` goes back to the sweeper, the worst one for a failed job."""
    quiet_library_notices()
    hydra_cfg = HydraConfig.get()
    in_sweep = hydra_cfg.mode == RunMode.MULTIRUN
    if parallel_jobs.sweep_stopping(hydra_cfg):  # Ctrl-C: no job starts any more
        return worst_value(cfg.optimized_metric)
    try:
        metrics = train(cfg)
    except Interrupted as stop:  # last.ckpt saved; exit 130 (SIGINT) or 143 (SIGTERM)
        if not parallel_jobs.runs_in_parallel(hydra_cfg):
            sys.exit(stop.exit_code)
        parallel_jobs.job_stopped(stop)  # the worker lives on; the sweep exits 130
        return worst_value(cfg.optimized_metric)
    except ConfigError as error:  # a trial's drawn value; a callback's, logger's, trainer's
        if not in_sweep:
            refuse(error)
        log.error("configuration error: %s", error)  # the job's log; the sweep goes on
        record_failure(error)
        return worst_value(cfg.optimized_metric)
    except Exception as error:
        if not in_sweep:
            raise
        log.exception("job failed")
        record_failure(error)
        return worst_value(cfg.optimized_metric)
    return objective(cfg.optimized_metric, metrics)


if __name__ == "__main__":
    main()
