"""``logger=mlflow``: a run's hyper-parameters and metrics land in the local MLflow store
under outputs/, beside its TensorBoard events, and read back with MLflow's own client; a
missing MLflow is refused before the run starts."""

import importlib.util
import json

import pytest
from hydra.core.hydra_config import HydraConfig

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.job.checks import check_run_settings
from transformer_lab.job.run import train
from transformer_lab.sweep import naming  # noqa: F401 (registers ${job_name:}, as train.py)

TINY = ["experiment=smoke", "~callbacks.norm_comparison", "~callbacks.attention_maps"]


@pytest.mark.slow
def test_a_run_reads_back_from_the_mlflow_store_with_its_params_and_metrics(
    compose_train, tmp_path
):
    mlflow = pytest.importorskip("mlflow")  # dev installs it (pyproject.toml); users: [mlflow]
    cfg = compose_train([*TINY, "logger=mlflow", f"paths.outputs_root={tmp_path}"])
    train(cfg)
    run_dir = tmp_path / "run"
    recorded = json.loads((run_dir / "metrics.json").read_text())
    assert list(run_dir.glob("events.out.tfevents.*"))  # TensorBoard stays

    client = mlflow.tracking.MlflowClient(f"sqlite:///{tmp_path}/mlflow.db")
    (run,) = client.search_runs([client.get_experiment_by_name("transformer_lab").experiment_id])
    assert run.info.status == "FINISHED"
    assert run.data.tags["run_folder"] == str(run_dir)
    params = run.data.params
    network = (params["model/d_model"], params["model/num_heads"])  # the nodes, flattened
    assert (*network, params["optim/lr"]) == ("32", "2", "0.001")
    history = client.get_metric_history(run.info.run_id, "val/seq_acc")
    assert [m.step for m in history] == [9, 19]  # every 10 steps, logged at step n - 1
    assert history[-1].value == pytest.approx(recorded["val/seq_acc"])
    for name in ("test/seq_acc", "test/loss", "val/loss"):
        assert run.data.metrics[name] == pytest.approx(recorded[name])
    losses = client.get_metric_history(run.info.run_id, "train/loss")
    assert [m.step for m in losses] == [4, 9, 14, 19]


def test_logger_mlflow_without_mlflow_installed_is_refused_naming_the_extra(
    compose_train, monkeypatch
):
    cfg = compose_train([*TINY, "logger=mlflow"])
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == "mlflow" else find_spec(name)
    )
    with pytest.raises(InvalidSetting) as refused:
        check_run_settings(cfg, HydraConfig.get())
    assert str(refused.value) == (
        "logger.mlflow='lightning.pytorch.loggers.MLFlowLogger': needs the mlflow package, not "
        "installed; allowed: pip install 'transformer_lab[mlflow]', or another logger"
    )
