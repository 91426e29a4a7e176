"""Cluster sweeps go through Hydra's submitit launcher: hydra/launcher=slurm as composed
(tests/e2e/test_submitit_local.py runs submitit_local)."""

from pathlib import Path

from hydra import compose, initialize_config_dir

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"


def test_slurm_launcher_starts_one_task_per_device():
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(
            "train",
            overrides=[
                "hydra/launcher=slurm",
                "trainer=ddp",
                "trainer.devices=4",
                "trainer.num_nodes=2",
            ],
            return_hydra_config=True,
        )
    launcher = cfg.hydra.launcher
    assert "SlurmLauncher" in launcher._target_
    assert (launcher.tasks_per_node, launcher.gpus_per_node, launcher.nodes) == (4, 4, 2)
