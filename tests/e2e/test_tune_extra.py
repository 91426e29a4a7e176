"""An install without the ``[tune]`` extra (no Optuna, no Hydra's Optuna sweeper): a study
asked for is refused in one line naming the extra, before any folder; a plain run trains
without importing Optuna."""

import json
import subprocess

import pytest

from ..command_line import python_code, run_command, train_cli_code

WITHOUT_TUNE = ["optuna", "hydra_plugins.hydra_optuna_sweeper"]


def train_without_tune(outputs_root, *overrides: str) -> subprocess.CompletedProcess:
    """``python -m transformer_lab.train *overrides`` as an install without the extra runs
    it; the modules that came in are printed last, as JSON."""
    code = (
        "import atexit, json\n"
        "loaded = lambda: sorted(k for k, v in sys.modules.items() if v is not None)\n"
        "atexit.register(lambda: print(json.dumps(loaded())))\n"
    ) + train_cli_code(*overrides, f"paths.outputs_root={outputs_root}")
    return run_command(python_code(code, WITHOUT_TUNE), outputs_root.parent)


@pytest.mark.parametrize("asks", ["hparams_search=optuna", "hydra/sweeper=optuna"])
def test_a_study_without_the_extra_is_one_line_naming_it_before_any_folder(tmp_path, asks):
    done = train_without_tune(tmp_path / "outputs", "-m", asks, "experiment=smoke")
    assert done.returncode == 2, done.stderr[-3000:]
    key = asks.split("=")[0]
    assert done.stderr.splitlines() == [
        f"error: {key}='optuna': needs Optuna and Hydra's Optuna sweeper, not installed; "
        'allowed: pip install "transformer_lab[tune]"'
    ]
    assert not (tmp_path / "outputs").exists()


@pytest.mark.slow
def test_a_plain_run_trains_without_the_extra_and_never_imports_optuna(tmp_path):
    done = train_without_tune(
        tmp_path / "outputs", "experiment=smoke", "trainer.max_steps=4", "~callbacks.progress_bar"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (run,) = (tmp_path / "outputs" / "runs").iterdir()
    assert json.loads((run / "metrics.json").read_text())["global_step"] == 4
    imported = json.loads(done.stdout.splitlines()[-1])
    assert not [m for m in imported if m.startswith(("optuna", "transformer_lab.sweep.study"))]
