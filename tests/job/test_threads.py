"""The run's ``threads`` setting: ``auto`` leaves to other work the cores it keeps busy."""

import pytest
import torch

from transformer_lab.job import threads
from transformer_lab.job.threads import AUTO, free_cores, set_job_threads


@pytest.mark.parametrize(
    ("available", "machine", "busy", "threads"),
    [
        (2, 2, 0.0, 2),  # idle: every core
        (2, 2, 0.3, 2),  # an editor's or a shell's bursts take no core
        (2, 2, 1.0, 1),  # one busy process: the other core
        (2, 2, 5.0, 1),  # a crowded machine: still one thread
        (2, 64, 10.0, 2),  # a share of a large machine whose other cores are busy
        (8, 8, None, 8),  # nothing to measure (no /proc/stat): torch's own default
    ],
)
def test_auto_takes_the_cores_other_work_leaves(available, machine, busy, threads):
    assert free_cores(available, machine, busy) == threads


def test_busy_cores_are_the_non_idle_share_of_every_core(monkeypatch):
    # /proc/stat's first line over 0.2 s on 4 cores: 80 ticks passed, 50 of them idle or
    # iowait, so 30/80 of 4 cores were busy with other work: 1.5 cores
    samples = iter([(1000, 700), (1080, 750)])
    monkeypatch.setattr(threads, "_cpu_times", lambda: next(samples))
    monkeypatch.setattr(threads, "machine_cores", lambda: 4)
    assert threads.busy_cores(0.0) == pytest.approx(1.5)


def test_the_real_proc_stat_gives_a_share_of_the_machine():
    busy = threads.busy_cores(0.1)
    if busy is None:
        pytest.skip("no /proc/stat on this system")
    assert 0.0 <= busy <= threads.machine_cores()


@pytest.fixture
def threads_restored():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def test_a_number_pins_torch_threads_unless_omp_num_threads_chose(monkeypatch, threads_restored):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    torch.set_num_threads(2)
    assert set_job_threads(1) == "torch threads: 1 (threads)"
    assert torch.get_num_threads() == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    assert set_job_threads(AUTO) is None  # the user's variable decides
    assert torch.get_num_threads() == 1


def test_auto_names_what_it_measured(monkeypatch, threads_restored):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    chosen = set_job_threads(AUTO)
    assert chosen.startswith(f"torch threads: {torch.get_num_threads()} (threads=auto: ")
    assert chosen.endswith("busy with other work)")
