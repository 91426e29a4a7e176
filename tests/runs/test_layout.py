"""Which run a checkpoint belongs to: the one place evaluation and resuming ask it."""

from pathlib import Path

from transformer_lab.runs.layout import last_checkpoint, run_folder_of


def make_run(folder: Path) -> Path:
    """A run folder as training leaves it: ``.hydra/`` and ``checkpoints/``."""
    (folder / ".hydra").mkdir(parents=True)
    (folder / "checkpoints").mkdir()
    return folder


def test_a_checkpoint_saved_by_a_run_belongs_to_that_run(tmp_path, monkeypatch):
    run = make_run(tmp_path / "model.norm=pre,seed=1")  # a sweep job's folder
    assert last_checkpoint(run) == run / "checkpoints" / "last.ckpt"
    assert run_folder_of(last_checkpoint(run)) == run
    assert run_folder_of(run / "checkpoints" / "best.ckpt") == run
    monkeypatch.chdir(run / "checkpoints")
    assert run_folder_of(Path("last.ckpt")) == run  # typed from inside the run


def test_a_checkpoint_kept_elsewhere_belongs_to_no_run(tmp_path):
    assert run_folder_of(tmp_path / "last.ckpt") is None
    (tmp_path / "copied" / "checkpoints").mkdir(parents=True)  # no .hydra: not a run
    assert run_folder_of(tmp_path / "copied" / "checkpoints" / "last.ckpt") is None
