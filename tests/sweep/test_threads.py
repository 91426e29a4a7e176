"""Jobs side by side share the machine: how many run at once, and threads per job."""

import pytest
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import read_write

from transformer_lab.config.validation import ConfigError
from transformer_lab.console import SCHEMA_NOTICE
from transformer_lab.job.checks import check_launcher
from transformer_lab.sweep.parallel import Worker, runs_in_parallel
from transformer_lab.sweep.threads import cores, sweep_n_jobs, threads_per_job

pytestmark = pytest.mark.filterwarnings(f"ignore:{SCHEMA_NOTICE}")


@pytest.mark.parametrize(
    ("n_jobs", "available", "threads"),
    [(2, 2, 1), (1, 2, 2), (4, 16, 4), (3, 16, 5), (8, 2, 1), (-1, 8, 1), (-2, 8, 1), (-7, 8, 4)],
)
def test_each_job_gets_cores_over_n_jobs_threads_and_at_least_one(n_jobs, available, threads):
    assert threads_per_job(n_jobs, available) == threads


def test_zero_jobs_is_one_clear_error():
    with pytest.raises(ValueError, match=r"n_jobs=0; allowed: a positive number of jobs, or -1"):
        threads_per_job(0, 2)


def test_a_cpu_sweep_runs_one_job_per_core(compose_train):
    compose_train(["hydra/launcher=joblib", "trainer=cpu"])
    assert HydraConfig.get().launcher.n_jobs == cores() == sweep_n_jobs("cpu")


def test_the_bundled_experiments_launch_in_parallel_and_basic_still_wins_on_the_command_line(
    compose_train,
):
    compose_train(["experiment=norm_comparison"])
    assert "JoblibLauncher" in HydraConfig.get().launcher._target_
    compose_train(["experiment=norm_comparison", "hydra/launcher=basic"])
    assert "BasicLauncher" in HydraConfig.get().launcher._target_


def test_only_a_multirun_through_joblib_counts_as_parallel_not_one_run_of_such_an_experiment(
    compose_train,
):
    compose_train(["experiment=norm_comparison"])  # a single run: its output stays put
    assert not runs_in_parallel(HydraConfig.get())
    with read_write(HydraConfig.get()):
        HydraConfig.get().mode = RunMode.MULTIRUN
    assert runs_in_parallel(HydraConfig.get())
    compose_train(["experiment=norm_comparison", "hydra/launcher=basic"])
    with read_write(HydraConfig.get()):
        HydraConfig.get().mode = RunMode.MULTIRUN
    assert not runs_in_parallel(HydraConfig.get())


def test_each_gpu_is_claimed_by_one_job_at_a_time(tmp_path):
    holder, other, third = Worker(), Worker(), Worker()  # three worker processes
    first = holder.claim_gpu(tmp_path, 2)
    assert {first, other.claim_gpu(tmp_path, 2)} == {0, 1}
    with pytest.raises(RuntimeError, match=r"all 2 GPUs are held by other jobs"):
        third.claim_gpu(tmp_path, 2)
    holder.gpu_lock.release()  # its process ends: the GPU is free again
    assert third.claim_gpu(tmp_path, 2) == first


def test_ddp_inside_a_parallel_local_sweep_is_refused_with_one_clear_message(compose_train):
    cfg = compose_train(["hydra/launcher=joblib", "trainer=ddp", "trainer.devices=2"])
    with read_write(HydraConfig.get()):
        HydraConfig.get().mode = RunMode.MULTIRUN
    with pytest.raises(ConfigError, match=r"local multirun; allowed: .*hydra/launcher=slurm"):
        check_launcher(cfg, HydraConfig.get())
