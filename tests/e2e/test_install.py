"""A non-editable install runs from anywhere: configs, console scripts, provenance."""

import json
import re
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

REPO = Path(__file__).resolve().parents[2]


def output(*command, **kwargs) -> str:
    done = subprocess.run(command, check=True, capture_output=True, text=True, **kwargs)
    return done.stdout.strip()


def pip(*args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        check=True,
        capture_output=True,
    )


@pytest.mark.slow
def test_a_wheel_in_a_fresh_venv_trains_and_evaluates_from_an_empty_folder(
    tmp_path, one_thread_env
):
    """Honest and fast (a minute at most on 2 cores; the training run is most of it).

    The wheel is built from a copy of what the repository ships (``src/`` with its
    ``conf`` link, ``conf/``, pyproject.toml, README.md) with this environment's setuptools,
    and installed without dependencies into a new venv whose only extra path is a ``.pth``
    line naming this environment's site-packages, where torch and Lightning live. ``.pth``
    files inside that folder are not run, so the editable install's import hook is not
    loaded: ``transformer_lab`` can only come from the wheel, which the test checks. No
    download, no second copy of torch.
    """
    source = tmp_path / "source"
    shutil.copytree(
        REPO / "src",
        source / "src",
        symlinks=True,
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
    )
    shutil.copytree(REPO / "conf", source / "conf", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    pip("wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "dist"), str(source))
    (wheel,) = (tmp_path / "dist").glob("transformer_lab-*.whl")

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = output(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))")
    (Path(purelib) / "dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    pip("--python", str(python), "install", "--no-deps", "--no-index", str(wheel))

    env = {k: v for k, v in one_thread_env.items() if k != "PYTHONPATH"}
    empty = tmp_path / "empty"
    empty.mkdir()
    where = output(
        python, "-c", "import transformer_lab as t; print(t.__file__)", cwd=empty, env=env
    )
    assert Path(where).is_relative_to(venv)  # the wheel, not the checkout

    done = subprocess.run(
        [venv / "bin" / "tlab-train", "experiment=smoke"],
        cwd=empty,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    (run,) = (empty / "outputs" / "runs").iterdir()
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["global_step"] == 20

    environment = json.loads((run / "environment.json").read_text())
    version = re.search(r'^version = "(.+)"', (REPO / "pyproject.toml").read_text(), re.M)[1]
    assert environment["transformer_lab"] == version
    assert environment["torch"] == torch.__version__
    assert environment["lightning"] and environment["hydra-core"] and environment["python"]
    assert environment["git_commit"] is None  # installed, not run from a checkout
    assert "tlab-train experiment=smoke" in environment["command"]

    events = EventAccumulator(str(run), size_guidance={"tensors": 0})
    events.Reload()
    assert "environment/text_summary" in events.Tags()["tensors"]

    done = subprocess.run(
        [venv / "bin" / "tlab-eval", f"ckpt_path={run}", "samples=0"],
        cwd=empty,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    evaluated = json.loads((run / "eval.json").read_text())
    assert evaluated["global_step"] == 20
    assert evaluated["greedy"]["test/seq_acc"] == pytest.approx(metrics["test/seq_acc"])
