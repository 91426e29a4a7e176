"""A run killed (SIGKILL) at any moment after its last step, or while it writes a
checkpoint, resumes with ``ckpt_path=last`` to the uninterrupted run's metrics.json, with
one best.ckpt and one last.ckpt equal to its own: a run is finished only when its closing
validation and its test are recorded."""

import signal

import pytest

from .conftest import assert_ends_as, needs_fork, only_run, run_apart, run_here

pytestmark = [pytest.mark.slow, needs_fork]


@pytest.mark.parametrize(
    "fault",
    [
        "checkpoint_save@2:SIGKILL",  # the step-10 save, written but not yet renamed
        "closing_validation:SIGKILL",
        "test:SIGKILL",
    ],
)
def test_a_run_killed_late_resumes_to_the_uninterrupted_metrics(tmp_path, straight, fault):
    outputs = tmp_path / "outputs"
    assert run_apart(outputs, "seed=0", fault=fault) == -signal.SIGKILL
    run = only_run(outputs)
    assert not (run / "metrics.json").exists()

    resumed = run_here(outputs, "seed=0", "ckpt_path=last")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert only_run(outputs) == run  # the resume went on in the killed run's folder
    assert_ends_as(run, straight(0))
