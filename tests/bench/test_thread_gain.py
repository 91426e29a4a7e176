"""``python -m transformer_lab.bench.thread_gain``: one step's time at each thread count."""

import pytest
import torch

from transformer_lab.bench import thread_gain
from transformer_lab.bench.workloads import QUICK


def test_each_thread_count_gets_its_median_step_time(monkeypatch):
    monkeypatch.setattr(thread_gain, "ROUNDS", 2)
    before = torch.get_num_threads()
    seconds = thread_gain.step_seconds(QUICK, (1, 2))
    assert torch.get_num_threads() in (1, 2)  # the last count timed is left set
    torch.set_num_threads(before)
    assert set(seconds) == {1, 2}
    assert all(0 < s < 1 for s in seconds.values())  # a d16 step: milliseconds


def test_one_thread_has_nothing_to_compare_with(monkeypatch):
    monkeypatch.setattr(torch, "get_num_threads", lambda: 1)
    with pytest.raises(SystemExit, match="set OMP_NUM_THREADS=2 or more"):
        thread_gain.main()
