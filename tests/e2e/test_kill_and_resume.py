"""A run killed hard and resumed ends exactly where an uninterrupted run ends."""

import json
import os
import signal
import subprocess

import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from ..command_line import run_command_here, start_command, wait_until

SAVE_OFTEN = "callbacks.last_checkpoint.every_n_train_steps=5"  # a kill loses little


def only_run(outputs_root):
    (run,) = (outputs_root / "runs").iterdir()
    return run


def final_weights(run):
    return torch.load(run / "checkpoints" / "last.ckpt", weights_only=True)["state_dict"]


# weight averaging that starts at step 10 of 40: the kill lands before or after its start
AVERAGING = ["callbacks/averaging=swa", "callbacks.averaging.start_fraction=0.25"]


@pytest.mark.slow
@pytest.mark.parametrize("averaging", [[], AVERAGING], ids=["plain", "averaging"])
def test_sigkilled_run_resumed_with_ckpt_path_last_matches_an_uninterrupted_run(
    tmp_path, resumable_command, averaging
):
    straight_root, killed_root = tmp_path / "straight", tmp_path / "killed"
    straight_run = resumable_command(straight_root, SAVE_OFTEN, *averaging)
    result = run_command_here(straight_run, cwd=tmp_path)  # only the killed run: a process
    assert result.returncode == 0, result.stderr[-3000:]

    killed_run = resumable_command(killed_root, SAVE_OFTEN, *averaging)
    process = start_command(killed_run, tmp_path, stdout=subprocess.DEVNULL)
    wait_until(process, lambda: list(killed_root.glob("runs/*/checkpoints/last.ckpt")))
    os.kill(process.pid, signal.SIGKILL)
    assert process.wait() == -signal.SIGKILL
    killed = only_run(killed_root)
    resumed_from = torch.load(killed / "checkpoints" / "last.ckpt", weights_only=True)
    assert 0 < resumed_from["global_step"] < 40
    assert not (killed / "metrics.json").exists()

    result = run_command_here([*killed_run, "ckpt_path=last"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert only_run(killed_root) == killed  # the resume left no folder of its own
    straight = only_run(straight_root)
    expected = json.loads((straight / "metrics.json").read_text())
    resumed = json.loads((killed / "metrics.json").read_text())  # written into the same run
    for key in ("val/loss", "val/seq_acc", "test/loss", "test/token_acc", "global_step"):
        assert resumed[key] == pytest.approx(expected[key], abs=1e-6), key
    a, b = final_weights(straight), final_weights(killed)  # with averaging: the average
    assert a.keys() == b.keys()
    assert max((a[k].float() - b[k].float()).abs().max().item() for k in a) <= 1e-6

    # TensorBoard: the resumed run's curve goes on from the checkpoint's step
    events = EventAccumulator(str(killed))
    events.Reload()
    steps = [s.step for s in events.Scalars("train/loss")]
    assert max(steps) >= 35
    assert min(s for s in steps if s > resumed_from["global_step"]) <= (
        resumed_from["global_step"] + 5
    )
