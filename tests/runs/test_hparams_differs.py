"""The HPARAMS entry as TensorBoard reads it: ``differs`` set by hand (no public API sets
it, see ``runs/hparams.py:mark_differs``) on exactly the keys given, the values and the
metric columns as torch's ``hparams()`` writes them."""

import pytest
from lightning.pytorch.loggers import TensorBoardLogger

from transformer_lab.runs.hparams import write_hparams


def test_tensorboard_reads_differs_on_the_marked_keys_only(tmp_path, read_hparams):
    logger = TensorBoardLogger(tmp_path, name="", version="", default_hp_metric=False)
    params = {"model.norm": "pre", "seed": 1, "optim.lr": 1e-3, "model.tie": False}
    metrics = ("val/loss", "val/seq_acc_best")
    write_hparams([logger], 20, params, {"model.norm", "seed"}, metrics, {"val/seq_acc_best": 0.5})
    logger.finalize("success")
    experiment, session = read_hparams(tmp_path)
    assert [h.name for h in experiment.hparam_infos] == list(params)
    assert {h.name for h in experiment.hparam_infos if h.differs} == {"model.norm", "seed"}
    assert [m.name.tag for m in experiment.metric_infos] == list(metrics)
    assert session.hparams["model.norm"].string_value == "pre"
    assert session.hparams["optim.lr"].number_value == pytest.approx(1e-3)
    assert session.hparams["model.tie"].bool_value is False
