"""A parallel sweep's worker process: its job's output goes to the job's log, each log line
once, its start and end lines to the terminal; and Hydra's notice about the joblib
launcher's config stays hidden in the worker as in the sweep's process."""

import json
import logging
import os
import pickle
import warnings
from pathlib import Path

from hydra import initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.types import RunMode

from transformer_lab.sweep.parallel import ParallelJobs, Worker, end_line
from transformer_lab.sweep_process import SWEEP_PID

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"


def test_a_jobs_log_lines_reach_its_log_once_and_the_terminal_keeps_the_job_lines(tmp_path, capfd):
    log_file = tmp_path / "train.log"
    logger = logging.getLogger("a_parallel_job")  # as Hydra sets up the root for a job:
    logger.propagate = False
    console = logging.StreamHandler(open(1, "w", closefd=False))  # noqa: SIM115 -- stdout
    logger.addHandler(console)
    logger.addHandler(logging.FileHandler(log_file))
    worker = Worker()
    try:
        worker.into_log(log_file)
        console.addFilter(worker)  # what ParallelJobs.on_job_start adds
        worker.say("start     the job")
        logger.warning("a line of the job")
        os.write(1, b"what Lightning prints\n")  # to the process's stdout
        worker.back_to_terminal()
        logger.warning("after the job")
    finally:
        logger.handlers.clear()
    terminal = capfd.readouterr().out
    log = log_file.read_text()
    assert log.count("a line of the job") == 1 and "what Lightning prints" in log
    assert "start     the job" in terminal and "after the job" in terminal
    assert "a line of the job" not in terminal and "start" not in log


def compose_with_the_joblib_launcher():
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        loader = GlobalHydra.instance().config_loader()
        overrides = ["hydra/launcher=joblib", "hydra.mode=MULTIRUN"]
        loader.load_configuration("train", overrides, run_mode=RunMode.MULTIRUN)
    GlobalHydra.instance().clear()


def schema_notices(before_composing) -> int:
    """How many times Hydra warns of the joblib config's schema in a process where
    ``before_composing`` ran first (the worker's view: filters as a fresh process has)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        before_composing()
        compose_with_the_joblib_launcher()
    return sum("is validated against ConfigStore schema" in str(w.message) for w in caught)


def test_the_callback_arriving_in_a_worker_hides_the_notice_before_its_job_is_composed():
    shipped = pickle.dumps(ParallelJobs())  # as joblib ships it with each job
    assert schema_notices(lambda: None) == 1
    assert schema_notices(lambda: pickle.loads(shipped)) == 0


def finished_job(folder: Path, optimized_metric: str | None) -> Path:
    """A job folder as a finished job leaves it: its overrides, metrics and resolved config."""
    (folder / ".hydra").mkdir(parents=True)
    (folder / ".hydra" / "overrides.yaml").write_text("- seed=0\n")
    (folder / "metrics.json").write_text(json.dumps({"val/seq_acc": 0.0, "val/bleu": 37.68}))
    if optimized_metric:
        (folder / "config_resolved.yaml").write_text(f"optimized_metric: {optimized_metric}\n")
    return folder


def test_a_finished_jobs_end_line_shows_the_metric_its_sweep_optimizes(tmp_path):
    bleu = finished_job(tmp_path / "translation", "val/bleu")
    assert end_line(bleu, 2808.4) == "done      translation  val/bleu 37.680  (2808 s)"
    accuracy = finished_job(tmp_path / "reversal", None)  # no config: the default metric
    assert end_line(accuracy, 17) == "done      reversal  val/seq_acc 0.000  (17 s)"


def test_a_finished_jobs_end_line_says_how_its_outcome_rule_judged_it(tmp_path):
    job = tmp_path / "translation"
    (job / ".hydra").mkdir(parents=True)
    (job / ".hydra" / "overrides.yaml").write_text("- seed=0\n")
    metrics = {"val/seq_acc": 0.0, "val/token_acc": 0.408, "outcome": "stalled"}
    (job / "metrics.json").write_text(json.dumps(metrics))
    rule = "outcome:\n  metric: val/token_acc\n  threshold: 0.5\n"
    (job / "config_resolved.yaml").write_text(rule)
    assert end_line(job, 1636) == (
        "done      translation  val/seq_acc 0.000  stalled: val/token_acc 0.408 < 0.5  (1636 s)"
    )
    (job / "config_resolved.yaml").write_text(rule.replace("val/token_acc", "val/seq_acc"))
    assert end_line(job, 17) == "done      translation  val/seq_acc 0.000  stalled  (17 s)"


def a_worker_of(sweep_pid: int, monkeypatch) -> Worker:
    """A :class:`Worker` in this process as if a sweep ``sweep_pid`` had started it, its
    first job arrived; the watching thread not started (it would SIGTERM this process)."""
    monkeypatch.setenv(SWEEP_PID, str(sweep_pid))
    monkeypatch.setattr(Worker, "_watch", lambda self: None)
    worker = Worker()
    worker.watch_parent()
    return worker


def test_a_worker_whose_first_job_arrives_after_the_sweep_died_knows_itself_orphaned(
    monkeypatch,
):
    # the sweep's process (not this one's parent) was killed before the job arrived: the
    # worker's parent is now whoever adopted it, which it must not take for the sweep
    assert a_worker_of(os.getppid() + 1_000_000, monkeypatch).orphaned


def test_a_worker_of_a_living_sweep_is_not_orphaned_and_the_sweeps_own_process_watches_nothing(
    monkeypatch,
):
    assert not a_worker_of(os.getppid(), monkeypatch).orphaned
    in_the_sweep = a_worker_of(os.getpid(), monkeypatch)  # joblib's n_jobs=1 runs jobs here
    assert in_the_sweep.parent is None and not in_the_sweep.orphaned
