"""Resuming a run that ended (job/resume.py): a finished run given as ckpt_path returns what
it recorded and trains nothing; a run counts as finished at max_steps or when it diverged;
a checkpoint of the former last.ckpt callback resumes without a warning (extending a finished
run on the command line: tests/e2e/test_finished_runs.py)."""

import json

import pytest
import torch

from transformer_lab.job import resume
from transformer_lab.job.resume import RunFinished, check_unfinished
from transformer_lab.job.run import train
from transformer_lab.sweep.objective import objective

from ..conftest import files_of

# a run of seconds, in the test process
TINY = [
    "experiment=smoke",
    "trainer.max_steps=6",
    "trainer.val_check_interval=3",
    "~callbacks.norm_comparison",
    "~callbacks.attention_maps",
]
# the callback state a checkpoint held while a ModelCheckpoint kept last.ckpt
FORMER_LAST_CHECKPOINT = (
    "ModelCheckpoint{'monitor': None, 'mode': 'min', 'every_n_train_steps': 250, "
    "'every_n_epochs': 0, 'train_time_interval': None}"
)


@pytest.mark.slow
def test_a_finished_run_given_as_ckpt_path_returns_what_it_recorded_and_trains_nothing(
    compose_train, tmp_path
):
    train(compose_train(TINY))
    run = tmp_path / "run"
    (run / ".hydra").mkdir()  # a run folder, as Hydra leaves it
    recorded, before = json.loads((run / "metrics.json").read_text()), files_of(run)

    again = compose_train([*TINY, f"ckpt_path={run}/checkpoints/last.ckpt"], run="again")
    returned = train(again)

    assert returned == recorded  # what a sweep job returns to the sweeper
    assert objective("val/seq_acc", returned) == recorded["val/seq_acc"]
    assert not (tmp_path / "again").exists()
    assert files_of(run) == before


@pytest.mark.slow
def test_the_checkpoint_ckpt_path_names_is_read_once(compose_train, tmp_path, monkeypatch):
    """The job's check reads it (a file a run of the lab wrote) and hands it on to the
    resume: one read of a file that may be large."""
    train(compose_train(TINY))
    last = tmp_path / "run" / "checkpoints" / "last.ckpt"
    (tmp_path / "run" / ".hydra").mkdir()
    reads, read = [], resume.read_checkpoint
    monkeypatch.setattr(resume, "read_checkpoint", lambda path: reads.append(path) or read(path))
    train(compose_train([*TINY, f"ckpt_path={last}"], run="again"))  # finished: trains nothing
    assert reads == [last]


def record(run, **metrics):
    (run / "checkpoints").mkdir(parents=True)
    (run / "metrics.json").write_text(json.dumps(metrics))


def test_a_run_counts_as_finished_when_it_ended_at_max_steps_or_diverged(tmp_path):
    job = tmp_path / "model.norm=pre,seed=1"  # a sweep job: its path needs quotes for Hydra
    record(job, global_step=300, diverged=False, diverged_at_step=None)
    with pytest.raises(RunFinished) as finished:
        check_unfinished(job, max_steps=300)
    assert str(finished.value) == (
        f"run {job} already finished at step 300 (metrics.json); nothing to resume. To train "
        f"further: \"ckpt_path='{job}/checkpoints/last.ckpt'\" trainer.max_steps=<more than 300>"
    )
    assert finished.value.metrics["global_step"] == 300
    check_unfinished(job, max_steps=600)  # more steps: extend it

    diverged = tmp_path / "diverged"
    record(diverged, global_step=8, diverged=True, diverged_at_step=7)
    with pytest.raises(RunFinished, match=r"diverged at step 7 \(metrics.json\); nothing to res"):
        check_unfinished(diverged, max_steps=600)
    check_unfinished(tmp_path / "running", max_steps=300)  # no metrics.json: not ended


@pytest.mark.slow
def test_a_checkpoint_of_the_former_last_ckpt_callback_resumes_without_a_warning(
    compose_train, tmp_path, recwarn
):
    train(compose_train(TINY))
    run = tmp_path / "run"
    (run / ".hydra").mkdir()
    last = run / "checkpoints" / "last.ckpt"
    checkpoint = torch.load(last, weights_only=True)
    checkpoint["callbacks"][FORMER_LAST_CHECKPOINT] = {"last_model_path": str(last)}
    torch.save(checkpoint, last)

    train(compose_train([*TINY, "trainer.max_steps=9", f"ckpt_path={last}"], run="again"))

    assert json.loads((run / "metrics.json").read_text())["global_step"] == 9
    said = [str(warning.message) for warning in recwarn]
    assert not [line for line in said if "Please add the following callbacks" in line], said
