"""trainer=ddp on two CPU processes (gloo) under one Hydra run."""

import json
import subprocess
import sys

import lightning as L
import pytest

from transformer_lab.data import SyntheticDataModule
from transformer_lab.lit_module import Seq2SeqLitModule

TINY = ["experiment=smoke", "data.batch_size=16", "trainer.max_steps=12",
        "trainer.val_check_interval=6", "~callbacks.progress_bar"]  # fmt: skip


@pytest.mark.slow
def test_two_process_ddp_writes_one_run_from_rank_zero_with_metrics_over_the_whole_split(tmp_path):
    command = [sys.executable, "-m", "transformer_lab.train", "trainer=ddp",
               "trainer.accelerator=cpu", "trainer.devices=2", *TINY,
               f"paths.outputs_root={tmp_path / 'outputs'}"]  # fmt: skip
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]

    (run,) = (tmp_path / "outputs" / "runs").iterdir()  # no second folder for rank 1
    assert (run / "train_ddp_process_1.log").is_file()  # rank 1 ran, in the same folder
    pids = {p.name.split(".")[-2] for p in run.glob("events.out.tfevents.*")}
    assert len(pids) == 1  # one process wrote TensorBoard events
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["global_step"] == 12

    # The same checkpoint tested in one process over the whole test split gives the same
    # numbers: the two ranks' halves were summed, not one half reported.
    checkpoint = run / "checkpoints" / "last.ckpt"
    module = Seq2SeqLitModule.load_from_checkpoint(checkpoint, weights_only=True)
    datamodule = SyntheticDataModule.load_from_checkpoint(checkpoint, weights_only=True)
    trainer = L.Trainer(accelerator="cpu", devices=1, logger=False, enable_progress_bar=False,
                        enable_model_summary=False)  # fmt: skip
    (single,) = trainer.test(module, datamodule=datamodule, verbose=False)
    for key in ("test/loss", "test/token_acc", "test/seq_acc"):
        assert metrics[key] == pytest.approx(single[key], abs=1e-6), key


def test_a_local_multirun_refuses_ddp_with_a_clear_message(compose_train):
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode
    from omegaconf import read_write

    from transformer_lab.config_check import check_launcher
    from transformer_lab.validation import ConfigError

    cfg = compose_train(["trainer=ddp", "trainer.devices=2"])
    check_launcher(cfg, HydraConfig.get())  # a single run: fine
    with read_write(HydraConfig.get()):
        HydraConfig.get().mode = RunMode.MULTIRUN
    with pytest.raises(ConfigError, match=r"local multirun; allowed: .*hydra/launcher=slurm"):
        check_launcher(cfg, HydraConfig.get())
