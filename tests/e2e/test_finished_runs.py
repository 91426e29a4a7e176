"""``last.ckpt`` of a run that ended is its end, and a resume point as exact as any other:
extending a finished run trains what an uninterrupted longer run trains; resuming a
finished run without asking for more steps trains nothing and says so. The commands run in
the test process: none of them is stopped from outside."""

import json

import pytest
import torch

from transformer_lab.runs.learning_curve import read_scalars

from ..command_line import run_command_here
from ..conftest import files_of
from ..docs.blocks import find
from ..docs.compare import matches_template, template_line

# validations at 10, 20, 30, 40; train/loss of every step, to compare the batches trained on
EVERY_STEP = ["trainer.val_check_interval=10", "trainer.log_every_n_steps=1"]


def only_run(outputs_root):
    (run,) = (outputs_root / "runs").iterdir()
    return run


def values(points) -> list[float]:
    return [value for _, value in points]


@pytest.fixture(scope="module")
def straight(tmp_path_factory, resumable_command):
    """The folder of the uninterrupted 40-step run, and the command that ran it."""
    root = tmp_path_factory.mktemp("straight")
    command = resumable_command(root / "outputs", *EVERY_STEP)
    result = run_command_here(command, cwd=root)
    assert result.returncode == 0, result.stderr[-3000:]
    return only_run(root / "outputs"), command


@pytest.mark.slow
def test_a_finished_run_extended_from_its_last_ckpt_trains_what_a_longer_run_trains(
    tmp_path, resumable_command, straight
):
    straight_run, _ = straight
    short = resumable_command(tmp_path / "outputs", *EVERY_STEP, "trainer.max_steps=20")
    result = run_command_here(short, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    run = only_run(tmp_path / "outputs")
    last = run / "checkpoints" / "last.ckpt"
    end = torch.load(last, weights_only=True)
    assert (end["global_step"], end["epoch"]) == (20, 1)  # 12 batches an epoch: in the 2nd

    extend = [*short, "trainer.max_steps=40", f"ckpt_path={last}"]
    result = run_command_here(extend, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert only_run(tmp_path / "outputs") == run  # extended in its own folder

    expected, got = read_scalars(straight_run), read_scalars(run)
    losses, straight_losses = got["train/loss"], expected["train/loss"]
    assert [s for s, _ in losses] == list(range(40))  # each step logged once
    assert values(losses) == pytest.approx(values(straight_losses), abs=1e-6)  # same batches
    for tag in ("val/loss", "val/seq_acc"):
        assert [s for s, _ in got[tag]] == [s for s, _ in expected[tag]] == [9, 19, 29, 39]
        assert values(got[tag]) == pytest.approx(values(expected[tag]), abs=1e-6), tag
    want = json.loads((straight_run / "metrics.json").read_text())
    have = json.loads((run / "metrics.json").read_text())
    assert have.keys() == want.keys()
    for key in [k for k in want if k.startswith(("val/", "test/"))] + ["global_step"]:
        assert have[key] == pytest.approx(want[key], abs=1e-6), key
    a = torch.load(straight_run / "checkpoints" / "last.ckpt", weights_only=True)["state_dict"]
    b = torch.load(last, weights_only=True)["state_dict"]
    assert a.keys() == b.keys()
    assert max((a[k].float() - b[k].float()).abs().max().item() for k in a) <= 1e-6


@pytest.mark.slow
def test_resuming_a_finished_run_trains_nothing_says_so_in_one_line_and_leaves_no_folder(
    straight,
):
    run, command = straight
    before = files_of(run)
    result = run_command_here([*command, "ckpt_path=last"], cwd=run.parents[2])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        f"run {run} already finished at step 40 (metrics.json); nothing to resume. To train "
        f"further: ckpt_path={run}/checkpoints/last.ckpt trainer.max_steps=<more than 40>"
    )
    assert result.stderr == ""
    shown = template_line(find("docs/run-folder.md", "run-folder-finished").text)
    assert matches_template(shown, result.stdout.strip()), shown  # what the doc says it reads
    assert list(run.parent.iterdir()) == [run]  # the folder Hydra made for it is gone
    assert files_of(run) == before  # no second test, no new TensorBoard points
