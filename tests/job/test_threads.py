"""The run's ``threads`` setting: ``auto`` leaves to other work the cores it keeps busy."""

import pytest
import torch

from transformer_lab.job import threads
from transformer_lab.job.threads import AUTO, ThreadChoice, choose_threads, free_cores


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


def test_a_number_pins_the_count_unless_omp_num_threads_chose(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert choose_threads(1) == ThreadChoice(1, "threads=1")
    assert choose_threads(1).line == "torch threads: 1 (threads=1)"
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    chosen = choose_threads(1)  # the user's variable decides, as torch read it
    assert chosen == ThreadChoice(torch.get_num_threads(), "OMP_NUM_THREADS=2")


def test_auto_names_what_it_measured(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(threads, "busy_cores", lambda: 1.0)
    monkeypatch.setattr(threads, "cores", lambda: 2)
    monkeypatch.setattr(threads, "machine_cores", lambda: 2)
    assert choose_threads(AUTO) == ThreadChoice(
        1, "threads=auto: 2 cores, 1.0 busy with other work"
    )
