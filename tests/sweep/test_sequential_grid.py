"""The sequential sweeper on a grid of hours: it runs only the configurations a hypothesis
compares, orders a stage's jobs seeds first, and stops launching after ``max_minutes``."""

import time

import pytest
from hydra.types import RunMode
from omegaconf import OmegaConf

from hydra_plugins.transformer_lab_sequential.sequential_sweeper import SequentialSweeper
from transformer_lab.config.validation import InvalidSetting
from transformer_lab.sweep.parallel import STOP_FILE

RULES = [
    {
        "id": "warmup_helps",
        "claim": "Post-norm learns more often with warmup.",
        "source": "a test",
        "metric": "outcome/learned",
        "key": "recipe",
        "values": ["warm", "cold"],
        "predicted": "A better",
        "across": ["depth"],
    },
    {
        "id": "admin_helps_deep",
        "claim": "At 18 layers Admin learns more often than post-norm.",
        "source": "a test",
        "metric": "outcome/learned",
        "key": "recipe",
        "values": ["admin", "cold"],
        "fixed": {"depth": 18},
        "predicted": "A better",
    },
]
GRID = [[f"depth={d}", f"recipe={r}"] for d in (6, 18) for r in ("warm", "cold", "admin")]


def sweeper(hypotheses=RULES, max_minutes=None) -> SequentialSweeper:
    found = SequentialSweeper(None, "seed", 4, 8, 0.05, 2000, max_minutes)
    found.config = OmegaConf.create({"hypotheses": hypotheses})
    return found


def test_a_configuration_no_hypothesis_compares_is_not_run():
    assert sweeper().compared(GRID) == [c for c in GRID if c != ["depth=6", "recipe=admin"]]


def test_a_sweep_without_hypotheses_runs_its_whole_grid():
    assert sweeper(hypotheses=[]).compared(GRID) == GRID


def test_a_stage_runs_every_configuration_at_a_seed_before_the_next_seed():
    jobs = sweeper().stage_jobs(GRID[:2], [2000, 2001], [])
    assert [job[:3] for job in jobs] == [
        ["depth=6", "recipe=warm", "seed=2000"],
        ["depth=6", "recipe=cold", "seed=2000"],
        ["depth=6", "recipe=warm", "seed=2001"],
        ["depth=6", "recipe=cold", "seed=2001"],
    ]


def test_max_minutes_is_the_time_after_which_no_job_is_launched(monkeypatch):
    found = sweeper(max_minutes=30)
    clock = iter([100.0, 100.0 + 29 * 60, 100.0 + 31 * 60])
    monkeypatch.setattr("time.monotonic", lambda: next(clock))
    started = time.monotonic()
    assert not found.out_of_time(started) and found.out_of_time(started)
    assert not sweeper().out_of_time(0.0)


@pytest.mark.parametrize("minutes", [0, -5])
def test_max_minutes_must_be_positive(minutes):
    with pytest.raises(InvalidSetting, match=r"hydra\.sweeper\.max_minutes"):
        sweeper(max_minutes=minutes)


class StoppedAfterFirstChunk:
    """A launcher whose first chunk's jobs meet Ctrl-C (the parallel sweep's stop file)."""

    def __init__(self, stop_file):
        self.stop_file, self.launched = stop_file, []

    def launch(self, jobs, initial_job_idx):
        self.launched.append(jobs)
        self.stop_file.touch()
        return []


def stopped_sweeper(tmp_path) -> SequentialSweeper:
    """A parallel sweep whose first chunk of jobs is stopped by Ctrl-C."""
    found = sweeper()
    found.config = OmegaConf.create(
        {
            "hypotheses": RULES,
            "hydra": {
                "mode": RunMode.MULTIRUN,
                "sweep": {"dir": str(tmp_path)},
                "launcher": {"_target_": "hydra_plugins.hydra_joblib_launcher.JoblibLauncher"},
            },
        }
    )
    found.launcher = StoppedAfterFirstChunk(tmp_path / STOP_FILE)
    return found


def test_ctrl_c_stops_the_launching_of_the_remaining_chunks(tmp_path, monkeypatch):
    found = stopped_sweeper(tmp_path)
    monkeypatch.setattr(found, "grid", lambda arguments: GRID)
    found.sweep([])
    assert len(found.launcher.launched) == 1  # 20 jobs at the first stage: 3 chunks of 8


def test_a_stage_stopped_by_ctrl_c_in_its_last_chunk_is_not_looked_at(
    tmp_path, monkeypatch, caplog
):
    found = stopped_sweeper(tmp_path)
    monkeypatch.setattr(found, "grid", lambda arguments: GRID)
    monkeypatch.setattr(f"{SequentialSweeper.__module__}.CHUNK", 20)  # the stage: one chunk
    monkeypatch.setattr(found, "look", lambda *args: pytest.fail("looked at a stopped stage"))
    with caplog.at_level("INFO"):
        found.sweep([])
    assert len(found.launcher.launched) == 1
    assert "stopped by Ctrl-C before the look after 4 seeds" in caplog.text
