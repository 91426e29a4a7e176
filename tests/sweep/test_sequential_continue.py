"""A sequential sweep run again goes on: a job stopped with a last.ckpt resumes from it, its
path given to Hydra quoted (the job folder's name holds '=' and ','), a finished job is not
run again. On job folders written by hand (no training)."""

from hydra.core.override_parser.overrides_parser import OverridesParser

from hydra_plugins.transformer_lab_sequential.sequential_sweeper import SequentialSweeper
from transformer_lab.runs.reader import read_jobs


def _job(sweep, name: str, overrides: list[str], metrics: bool = False, last: bool = False):
    folder = sweep / name
    (folder / ".hydra").mkdir(parents=True)
    (folder / ".hydra" / "overrides.yaml").write_text("".join(f"- {o}\n" for o in overrides))
    if metrics:
        (folder / "metrics.json").write_text('{"diverged": false}\n')
    if last:
        (folder / "checkpoints").mkdir()
        (folder / "checkpoints" / "last.ckpt").write_bytes(b"saved")
    return folder


def test_a_stopped_job_resumes_from_its_last_checkpoint_through_a_path_hydra_parses(tmp_path):
    stopped = _job(tmp_path, "model.norm=pre,seed=1", ["model.norm=pre", "seed=1"], last=True)
    _job(tmp_path, "model.norm=pre,seed=0", ["model.norm=pre", "seed=0"], metrics=True)
    sweeper = SequentialSweeper(None, "seed", 3, 6, 0.05, 0)
    jobs = sweeper.stage_jobs([["model.norm=pre"]], [0, 1, 2], read_jobs(tmp_path))
    assert [job[:2] for job in jobs] == [["model.norm=pre", "seed=1"], ["model.norm=pre", "seed=2"]]
    resumed, fresh = jobs
    assert len(fresh) == 2  # no checkpoint of its own: a fresh start
    (ckpt,) = OverridesParser.create().parse_overrides([resumed[2]])
    assert ckpt.key_or_group == "ckpt_path"
    assert ckpt.value() == str(stopped / "checkpoints" / "last.ckpt")
