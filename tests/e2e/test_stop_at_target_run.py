"""A run from the command line stops once ``val/seq_acc`` is at ``stop_at_seq_acc`` at two
validations in a row, and both the terminal and ``metrics.json`` say at which step and why.

The copy task on 1-3 words reaches half its held-out sequences in about 200 steps, so a
target of 0.5 stops it well before its 300."""

import json
import re

import pytest

from ..command_line import run_train
from ..docs.blocks import find
from ..docs.compare import matches_template, template_line

RUN = [
    *(
        "experiment=smoke",
        "data=copy",
        "data.min_task_len=1",
        "data.max_task_len=3",
        "optim.lr=3e-3",
    ),
    *("trainer.max_steps=300", "trainer.val_check_interval=10", "stop_at_seq_acc=0.5"),
    *("~callbacks.progress_bar", "~callbacks.attention_maps", "~callbacks.norm_comparison"),
]
REASON = (
    r"val/seq_acc >= 0\.5 at 2 consecutive validations "
    r"\((\d\.\d+) at step (\d+), (\d\.\d+) at step (\d+)\)"
)
STOPPED = re.compile(rf"stopped at step (\d+) of trainer\.max_steps=300: ({REASON})")


@pytest.mark.slow
def test_the_run_stops_at_its_target_and_says_where_and_why(tmp_path):
    done = run_train(tmp_path, *RUN, cwd=tmp_path)  # a process: its terminal has no notice
    assert done.returncode == 0, done.stderr[-3000:]
    assert "on_before_batch_transfer" not in done.stdout + done.stderr  # no notice to act on
    ((step, reason, first, first_step, last, last_step),) = STOPPED.findall(
        done.stdout + done.stderr
    )
    step, first_step, last_step = int(step), int(first_step), int(last_step)
    terminal = (done.stdout + done.stderr).split("\n")
    (line,) = [line for line in terminal if "stopped at step" in line]
    for doc, name in (
        ("README.md", "readme-stop-line"),
        ("docs/run-folder.md", "run-folder-stop-line"),
    ):
        shown = template_line(find(doc, name).text)  # what the docs say the line reads
        assert matches_template(shown, line.split("] - ", 1)[1]), (doc, shown, line)
    assert first_step + 10 == last_step == step < 300  # two validations in a row
    assert float(first) >= 0.5 and float(last) >= 0.5

    (run,) = (tmp_path / "runs").iterdir()
    metrics = json.loads((run / "metrics.json").read_text())
    assert (metrics["global_step"], metrics["stopped_early"]) == (step, True)
    assert metrics["stop_reason"] == reason
    assert metrics["val/seq_acc"] == pytest.approx(float(last), abs=5e-4)
    assert "test/seq_acc" in metrics  # the run tested the weights it stopped with
    assert metrics["outcome"] == "learned"  # the default rule: final val/seq_acc >= 0.5
    seen = json.loads((run / "stop_at_target.json").read_text())  # [[step, value], ...]
    assert [s for s, _ in seen] == list(range(10, step + 1, 10))
    assert seen[-2][1] == pytest.approx(float(first), abs=5e-4)
    assert seen[-3][1] < 0.5  # else it had stopped a validation earlier
