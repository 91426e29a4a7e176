"""The Lightning fit loop against a plain PyTorch loop over the same module and data.

Both train the main job's :class:`~transformer_lab.training.module.Seq2SeqLitModule` (composed
from ``conf/``) on its datamodule, with its optimizer, LR schedule and gradient clipping.
The Lightning side is a ``Trainer`` with the main job's step settings and its TensorBoard
logger; checkpoints, validation, the progress bar and the analysis callbacks are off,
since they are features with costs of their own, not loop overhead. A step is the wall
time from one batch's start to the next one's, so data loading (and on a GPU, moving the
batch there) counts on both sides.
"""

import logging
import statistics
import tempfile
import time

import hydra
import lightning as L
import torch

from transformer_lab.bench import progress
from transformer_lab.bench.rows import Row
from transformer_lab.bench.timing import synchronize
from transformer_lab.bench.workloads import loss
from transformer_lab.console import unheard
from transformer_lab.job.build import build_data_and_model


def main_job(overrides: list[str]):
    """The main job's datamodule (set up) and a fresh LightningModule, plus its config."""
    with hydra.initialize_config_module("transformer_lab.conf", version_base="1.3"):
        cfg = hydra.compose("train", overrides=overrides)
    datamodule, module = build_data_and_model(cfg)
    datamodule.setup("fit")
    return datamodule, module, cfg


class StepClock(L.Callback):
    """Records when each training batch starts (once the GPU, if any, has caught up)."""

    def __init__(self):
        self.starts: list[float] = []

    def on_train_batch_start(self, *args) -> None:
        synchronize()
        self.starts.append(time.perf_counter())


def lightning_steps(module, datamodule, cfg, steps: int, log_dir: str, device: str) -> list[float]:
    clock = StepClock()
    accelerator = "gpu" if torch.device(device).type == "cuda" else "cpu"
    with unheard("all", loggers={"lightning.pytorch": logging.WARNING}):  # no banners, hints
        trainer = L.Trainer(
            accelerator=accelerator,
            devices=1,
            max_steps=steps,
            precision=cfg.trainer.precision,
            gradient_clip_val=cfg.trainer.gradient_clip_val,
            log_every_n_steps=cfg.trainer.log_every_n_steps,
            logger=L.pytorch.loggers.TensorBoardLogger(log_dir),
            callbacks=[clock],
            limit_val_batches=0,
            num_sanity_val_steps=0,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
        )
        trainer.fit(module, datamodule=datamodule)
    return clock.starts


def plain_steps(module, datamodule, cfg, steps: int, device: str) -> list[float]:
    module.to(device)
    config = module.configure_optimizers()
    optimizer, scheduler = config["optimizer"], config["lr_scheduler"]["scheduler"]
    module.train()
    starts = []
    while len(starts) <= steps:  # epochs
        for batch in datamodule.train_dataloader():
            synchronize()
            starts.append(time.perf_counter())
            if len(starts) > steps:
                break
            batch = {name: tensor.to(device) for name, tensor in batch.items()}
            loss(module.model, batch).backward()
            torch.nn.utils.clip_grad_norm_(module.parameters(), cfg.trainer.gradient_clip_val)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
    return starts


def _mean_step(starts: list[float], skip: int) -> float:
    """Mean seconds between batch starts, after ``skip`` warm-up steps."""
    kept = starts[skip:]
    return (kept[-1] - kept[0]) / (len(kept) - 1)


def overhead(
    overrides: list[str], steps: int, rounds: int, skip: int = 3, device: str = "cpu"
) -> Row:
    """Steps/s of Lightning and of the plain loop, alternating rounds, median round."""
    name = "fit steps/s, main job: Lightning / plain PyTorch loop (higher is better)"
    datamodule, module, cfg = main_job(overrides)
    times = {"lightning": [], "plain": []}
    with tempfile.TemporaryDirectory() as log_dir:
        for _ in progress.rounds(rounds, name):
            starts = lightning_steps(module, datamodule, cfg, steps + skip, log_dir, device)
            times["lightning"].append(_mean_step(starts, skip))
            times["plain"].append(
                _mean_step(plain_steps(module, datamodule, cfg, steps + skip, device), skip)
            )
    lightning, plain = (statistics.median(times[k]) for k in ("lightning", "plain"))
    return Row(name, 1 / lightning, 1 / plain, "steps/s")
