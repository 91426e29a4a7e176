"""trainer=ddp on two CPU processes (gloo) under one Hydra run."""

import json
from pathlib import Path

import lightning as L
import pytest
import torch

from transformer_lab.data import SyntheticDataModule
from transformer_lab.training.module import Seq2SeqLitModule

from ..command_line import run_train

# 512 training examples on 2 ranks in batches of 16: 16 steps an epoch. val 63 and test 65
# do not split evenly: a padding sampler would count an example twice, and with 65 rank 0
# runs one batch more than rank 1 (33 examples against 32).
TINY = [
    "experiment=smoke",
    "data.batch_size=16",
    "data.val_size=63",
    "data.test_size=65",
    "trainer.max_steps=24",
    "trainer.val_check_interval=6",
    "~callbacks.progress_bar",
]
DDP = ["trainer=ddp", "trainer.accelerator=cpu", "trainer.devices=2"]
MID_EPOCH = 10  # the step of a checkpoint inside the first epoch


def train_ddp(cwd: Path, outputs: Path, *overrides: str) -> Path:
    """Train with DDP on two processes; the run folder."""
    result = run_train(outputs, *DDP, *TINY, *overrides, cwd=cwd)
    assert result.returncode == 0, result.stderr[-3000:]
    # the metrics are summed over the ranks by torchmetrics and logged with sync_dist=True:
    # no warning that a metric of one rank was logged as the whole run's
    assert "sync_dist" not in result.stdout + result.stderr
    (run,) = (outputs / "runs").iterdir()  # no second folder for rank 1
    return run


@pytest.fixture(scope="module")
def straight(tmp_path_factory) -> tuple[Path, Path]:
    """An uninterrupted DDP run, and the checkpoint it wrote at step ``MID_EPOCH``."""
    root = tmp_path_factory.mktemp("straight")
    every_mid_epoch = {
        "_target_": "lightning.pytorch.callbacks.ModelCheckpoint",
        "dirpath": root / "mid",
        "filename": '"step{step}"',
        "auto_insert_metric_name": False,
        "every_n_train_steps": MID_EPOCH,
        "save_top_k": -1,
    }
    keep = [f"+callbacks.mid_epoch.{key}={value}" for key, value in every_mid_epoch.items()]
    run = train_ddp(root, root / "outputs", *keep)
    return run, root / "mid" / f"step{MID_EPOCH}.ckpt"


def final_weights(run: Path) -> dict[str, torch.Tensor]:
    return torch.load(run / "checkpoints" / "last.ckpt", weights_only=True)["state_dict"]


@pytest.mark.slow
def test_two_process_ddp_writes_one_run_from_rank_zero_with_metrics_over_the_whole_split(
    straight,
):
    run, _ = straight
    assert (run / "train_ddp_process_1.log").is_file()  # rank 1 ran, in the same folder
    pids = {p.name.split(".")[-2] for p in run.glob("events.out.tfevents.*")}
    assert len(pids) == 1  # one process wrote TensorBoard events
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["global_step"] == 24

    # The same checkpoint evaluated in one process over the whole splits gives the same
    # numbers: the two ranks' shards were summed, not one shard reported, and no example
    # was counted twice.
    checkpoint = run / "checkpoints" / "last.ckpt"
    module = Seq2SeqLitModule.load_from_checkpoint(checkpoint, weights_only=True)
    datamodule = SyntheticDataModule.load_from_checkpoint(checkpoint, weights_only=True)
    assert (datamodule.hparams.val_size, datamodule.hparams.test_size) == (63, 65)
    trainer = L.Trainer(
        accelerator="cpu",
        devices=1,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    (single,) = trainer.test(module, datamodule=datamodule, verbose=False)
    (single_val,) = trainer.validate(module, datamodule=datamodule, verbose=False)
    single |= single_val
    for key in ("test/loss", "test/token_acc", "test/seq_acc", "val/loss", "val/token_acc"):
        assert metrics[key] == pytest.approx(single[key], abs=1e-6), key


@pytest.mark.slow
def test_a_ddp_run_resumed_mid_epoch_ends_where_the_uninterrupted_run_ends(straight, tmp_path):
    run, checkpoint = straight
    assert torch.load(checkpoint, weights_only=True)["global_step"] == MID_EPOCH
    resumed = train_ddp(tmp_path, tmp_path / "outputs", f"ckpt_path={checkpoint}")

    expected = json.loads((run / "metrics.json").read_text())
    got = json.loads((resumed / "metrics.json").read_text())
    for key in ("global_step", "val/loss", "val/seq_acc", "test/loss", "test/token_acc"):
        assert got[key] == pytest.approx(expected[key], abs=1e-6), key
    a, b = final_weights(run), final_weights(resumed)
    assert a.keys() == b.keys()
    assert max((a[k].float() - b[k].float()).abs().max().item() for k in a) <= 1e-6
