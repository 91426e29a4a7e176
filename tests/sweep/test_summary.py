"""The end of a multirun counts its jobs as the report reads them: summary.json, the log
lines and the exit code, on job folders written by hand (no training)."""

import json
import logging

import pytest
from omegaconf import OmegaConf

from transformer_lab.callbacks.scalar_layout import VAL_FIRST
from transformer_lab.sweep.parallel import STOP_FILE
from transformer_lab.sweep.summary import SweepSummary, summarize_sweep

FAILURE = {"error": "ValueError", "message": "Invalid learning rate: -1", "traceback": "..."}


def _job(sweep, name: str, **records: dict) -> None:
    """A job folder as Hydra leaves it, with ``metrics.json``/``failed.json`` from ``records``."""
    (sweep / name / ".hydra").mkdir(parents=True)
    (sweep / name / ".hydra" / "overrides.yaml").write_text(f"- {name}\n")
    for record, content in records.items():
        (sweep / name / f"{record}.json").write_text(json.dumps(content))


@pytest.fixture
def sweep(tmp_path):
    _job(tmp_path, "optim.lr=1e-3", metrics={"diverged": False, "val/seq_acc": 0.9})
    _job(tmp_path, "optim.lr=1e3", metrics={"diverged": True, "diverged_at_step": 3})
    _job(tmp_path, "optim.lr=-1", failed=FAILURE)
    _job(tmp_path, "optim.lr=3e-3")  # killed before its first step, or never started
    _job(tmp_path, "optim.lr=1e-2")  # stopped by Ctrl-C: its last.ckpt saved
    (tmp_path / "optim.lr=1e-2" / "checkpoints").mkdir()
    (tmp_path / "optim.lr=1e-2" / "checkpoints" / "last.ckpt").write_bytes(b"")
    (tmp_path / "report").mkdir()  # the report's TensorBoard run
    (tmp_path / ".submitit" / "1234").mkdir(parents=True)
    return tmp_path


def test_the_summary_counts_the_job_folders_and_no_other_folder(sweep):
    assert summarize_sweep(sweep) == {
        "jobs": 5,
        "finished": 2,
        "diverged": ["optim.lr=1e3"],
        "failed": {"optim.lr=-1": "ValueError: Invalid learning rate: -1"},
        "unfinished": {
            "optim.lr=1e-2": "resumable from checkpoints/last.ckpt",
            "optim.lr=3e-3": "no checkpoint",
        },
        "damaged": {},
    }


def test_a_folder_without_jobs_is_summarized_as_zero_jobs(tmp_path):
    empty = {
        "jobs": 0,
        "finished": 0,
        "diverged": [],
        "failed": {},
        "unfinished": {},
        "damaged": {},
    }
    assert summarize_sweep(tmp_path) == empty


def test_a_failed_job_is_logged_and_the_sweep_exits_1(sweep, caplog):
    config = OmegaConf.create({"hydra": {"sweep": {"dir": str(sweep)}}})
    with caplog.at_level(logging.INFO), pytest.raises(SystemExit) as exited:
        SweepSummary().on_multirun_end(config)
    assert exited.value.code == 1
    assert json.loads((sweep / "summary.json").read_text()) == summarize_sweep(sweep)
    assert caplog.messages == [
        f"sweep {sweep}: 5 jobs, 2 finished (1 diverged), 1 failed",
        f"tensorboard: tensorboard --logdir {sweep} (val/ first: {VAL_FIRST})",
        "failed: optim.lr=-1 -- ValueError: Invalid learning rate: -1",
    ]


def test_a_sweep_stopped_by_ctrl_c_says_what_was_saved_and_exits_130(sweep, caplog):
    """The stop file is what the first Ctrl-C of a parallel sweep leaves (parallel_jobs)."""
    (sweep / STOP_FILE).touch()
    config = OmegaConf.create({"hydra": {"sweep": {"dir": str(sweep)}}})
    with caplog.at_level(logging.INFO), pytest.raises(SystemExit) as exited:
        SweepSummary().on_multirun_end(config)
    assert exited.value.code == 130
    assert caplog.messages[-1] == (
        "sweep stopped by Ctrl-C: 1 jobs saved their last.ckpt (resume commands above), "
        "1 did not start"
    )
    assert not (sweep / STOP_FILE).exists()  # a rerun of the sweep starts its jobs again


def test_a_job_whose_record_is_cut_is_named_as_damaged_and_the_sweep_exits_1(sweep, caplog):
    """A 0-byte failed.json (written by an older version on a full disk) is not read as no
    record: the summary names the file, counts the job apart, and the sweep exits 1."""
    (sweep / "optim.lr=-1" / "failed.json").write_text("")
    (sweep / "optim.lr=1e-3" / "metrics.json").write_text('{"diverged": fal')
    config = OmegaConf.create({"hydra": {"sweep": {"dir": str(sweep)}}})
    with caplog.at_level(logging.INFO), pytest.raises(SystemExit) as exited:
        SweepSummary().on_multirun_end(config)
    assert exited.value.code == 1
    summary = json.loads((sweep / "summary.json").read_text())
    assert (summary["jobs"], summary["finished"], summary["failed"]) == (5, 1, {})
    assert sorted(summary["damaged"]) == ["optim.lr=-1", "optim.lr=1e-3"]
    assert (
        caplog.messages[0] == f"sweep {sweep}: 5 jobs, 1 finished (1 diverged), 0 failed, 2 damaged"
    )
    assert f"damaged: {sweep / 'optim.lr=-1' / 'failed.json'} is damaged (empty); " in caplog.text
    assert f"{sweep / 'optim.lr=1e-3' / 'metrics.json'} is damaged (not JSON: " in caplog.text
