"""A sequential sweep run again goes on: a finished job is not run again, and a stopped one
runs again with the overrides it first ran with, so that it lands in its own folder (named
by them) and resumes from the last.ckpt there, with no ``ckpt_path`` to quote (a folder
name holds '=' and ',') or to count as a configuration. On job folders written by hand."""

from hydra_plugins.transformer_lab_sequential.sequential_sweeper import SequentialSweeper
from transformer_lab.runs.reader import read_jobs
from transformer_lab.sweep.naming import folder_name


def _job(sweep, overrides: list[str], metrics: bool = False, last: bool = False) -> None:
    folder = sweep / ",".join(overrides)
    (folder / ".hydra").mkdir(parents=True)
    (folder / ".hydra" / "overrides.yaml").write_text("".join(f"- {o}\n" for o in overrides))
    if metrics:
        (folder / "metrics.json").write_text('{"diverged": false}\n')
    if last:
        (folder / "checkpoints").mkdir()
        (folder / "checkpoints" / "last.ckpt").write_bytes(b"saved")


def test_a_stopped_job_runs_again_as_it_first_ran_and_a_finished_one_does_not(tmp_path):
    _job(tmp_path, ["model.norm=pre", "seed=0"], metrics=True)
    _job(tmp_path, ["model.norm=pre", "seed=1"], last=True)
    sweeper = SequentialSweeper(None, "seed", 3, 6, 0.05, 0)
    jobs = sweeper.stage_jobs([["model.norm=pre"]], [0, 1, 2], read_jobs(tmp_path))
    assert jobs == [["model.norm=pre", "seed=1"], ["model.norm=pre", "seed=2"]]
    swept = frozenset({"model.norm", "seed"})
    assert (tmp_path / folder_name(jobs[0], [], swept) / "checkpoints" / "last.ckpt").is_file()
