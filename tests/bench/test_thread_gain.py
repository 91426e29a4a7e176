"""``python -m transformer_lab.bench.thread_gain``: one step's time at each thread count
(what it times; no test asserts a time)."""

import pytest
import torch

from transformer_lab.bench import thread_gain
from transformer_lab.bench.workloads import QUICK


def test_each_thread_count_times_steps_run_at_that_count(monkeypatch):
    """What is timed, not how long it takes (that is the benchmark's to say, on an idle
    machine): every step of a count's rounds runs at that count."""
    monkeypatch.setattr(thread_gain, "ROUNDS", 2)
    counts = []
    step = thread_gain.train_step
    monkeypatch.setattr(
        thread_gain,
        "train_step",
        lambda *args: counts.append(torch.get_num_threads()) or step(*args),
    )
    before = torch.get_num_threads()
    try:
        seconds = thread_gain.step_seconds(QUICK, (1, 2))
    finally:
        torch.set_num_threads(before)
    assert set(seconds) == {1, 2}
    assert all(s > 0 for s in seconds.values())
    # a warm-up step and 2 rounds of one step at each count
    assert sorted(counts) == [1, 1, 1, 2, 2, 2]


def test_one_thread_has_nothing_to_compare_with(monkeypatch):
    monkeypatch.setattr(torch, "get_num_threads", lambda: 1)
    with pytest.raises(SystemExit, match="set OMP_NUM_THREADS=2 or more"):
        thread_gain.main()
