"""Jobs side by side share the machine: how many run at once, and threads per job."""

from pathlib import Path

import pytest
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import read_write

from transformer_lab.config.validation import ConfigError
from transformer_lab.console import SCHEMA_NOTICE
from transformer_lab.job import threads as job_thread_settings
from transformer_lab.job.checks import check_launcher
from transformer_lab.job.threads import AUTO, ThreadChoice, choose_threads
from transformer_lab.runs.sweep_record import SweepRecord
from transformer_lab.sweep import threads as sweep_threads_module
from transformer_lab.sweep.parallel import Worker, runs_in_parallel
from transformer_lab.sweep.record import RecordSweep
from transformer_lab.sweep.threads import (
    cores,
    job_threads,
    sweep_n_jobs,
    sweep_threads,
    threads_per_job,
)

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
    first = holder.claim_gpu(tmp_path, 2, n_jobs=2)
    assert {first, other.claim_gpu(tmp_path, 2, n_jobs=2)} == {0, 1}
    with pytest.raises(RuntimeError, match=r"all 1 places on each of 2 GPUs are held"):
        third.claim_gpu(tmp_path, 2, n_jobs=2)
    holder.gpu_lock.release()  # its process ends: the GPU is free again
    assert third.claim_gpu(tmp_path, 2, n_jobs=2) == first


def test_more_jobs_than_gpus_share_them_evenly(tmp_path):
    workers = [Worker() for _ in range(6)]  # n_jobs=5 on 2 GPUs: 3 places a GPU
    claimed = [worker.claim_gpu(tmp_path, 2, n_jobs=5) for worker in workers]
    assert claimed == [0, 1, 0, 1, 0, 1]  # every GPU's first place before any second
    with pytest.raises(RuntimeError, match=r"allowed: n_jobs <= 6"):
        Worker().claim_gpu(tmp_path, 2, n_jobs=5)


def test_ddp_inside_a_parallel_local_sweep_is_refused_with_one_clear_message(compose_train):
    cfg = compose_train(["hydra/launcher=joblib", "trainer=ddp", "trainer.devices=2"])
    with read_write(HydraConfig.get()):
        HydraConfig.get().mode = RunMode.MULTIRUN
    with pytest.raises(ConfigError, match=r"local multirun; allowed: .*hydra/launcher=slurm"):
        check_launcher(cfg, HydraConfig.get())


@pytest.fixture
def machine(monkeypatch):
    """A 2-core machine with no OMP_NUM_THREADS whose other work keeps ``busy[0]`` cores
    busy (change it to change the load)."""
    busy = [0.0]
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(job_thread_settings, "busy_cores", lambda: busy[0])
    monkeypatch.setattr(job_thread_settings, "cores", lambda: 2)
    monkeypatch.setattr(job_thread_settings, "machine_cores", lambda: 2)
    monkeypatch.setattr(sweep_threads_module, "cores", lambda: 2)
    return busy


def recorded(config) -> ThreadChoice:
    record = SweepRecord.read(Path(config.hydra.sweep.dir))
    return ThreadChoice(record.torch_threads, record.threads_decided_by)


def test_auto_is_decided_once_at_the_sweeps_start_and_every_job_takes_it(
    compose_sweep, tmp_path, machine
):
    config = compose_sweep([f"paths.outputs_root={tmp_path}"])
    RecordSweep().on_multirun_start(config)  # an idle machine at the start
    sweep = recorded(config)
    assert sweep == ThreadChoice(
        2, "threads=auto: 2 cores, 0.0 busy with other work, at the sweep's start"
    )
    machine[0] = 1.0  # then other work starts: a job measuring for itself would take 1
    assert choose_threads(AUTO).threads == 1
    jobs = [job_threads(AUTO, sweep, None) for _ in range(3)]
    assert {job.threads for job in jobs} == {2}
    assert jobs[0].why == f"the sweep's: {sweep.why}"


def test_a_continued_sweep_keeps_the_count_its_jobs_ran_with(compose_sweep, tmp_path, machine):
    config = compose_sweep([f"paths.outputs_root={tmp_path}"])
    machine[0] = 1.0
    RecordSweep().on_multirun_start(config)
    machine[0] = 0.0  # started again into its folder on an idle machine
    RecordSweep().on_multirun_start(config)
    assert recorded(config).threads == 1


def test_a_parallel_sweep_gives_each_job_its_share_and_a_pinned_job_keeps_its_number(
    compose_sweep, machine
):
    config = compose_sweep(["hydra/launcher=joblib", "hydra.launcher.n_jobs=2"])
    share = sweep_threads(config, parallel=True)
    assert share == ThreadChoice(1, "hydra/launcher=joblib: 2 cores, n_jobs=2")
    assert job_threads(2, share, 2).threads == 1  # side by side, the share holds
    assert job_threads(2, share, None) == ThreadChoice(2, "threads=2")  # -m threads=1,2
    assert job_threads(AUTO, None, 2) == share  # a sweep without its record


def test_a_submitit_sweep_gives_each_job_the_cpus_it_asks_for(compose_sweep, machine):
    config = compose_sweep(["hydra/launcher=slurm"])
    assert sweep_threads(config, parallel=False) == ThreadChoice(
        8, "hydra.launcher.cpus_per_task=8"
    )
