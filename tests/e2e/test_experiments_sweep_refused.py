"""A sweep over experiments whose launchers differ, typed on the command line, is refused
before any folder (the check itself: tests/sweep/test_experiment_launchers.py)."""

import pytest

from ..command_line import run_train_here


@pytest.mark.slow
def test_the_command_line_refuses_before_any_folder(tmp_path):
    done = run_train_here(tmp_path, "-m", "experiment=norm_comparison,smoke", cwd=tmp_path)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.strip().splitlines()[-1].startswith("error: hydra/launcher='joblib': ")
    assert list(tmp_path.iterdir()) == []
