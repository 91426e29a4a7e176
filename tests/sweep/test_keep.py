"""What ``transformer_lab.sweep.keep`` copies of a sweep folder built by hand: finished jobs
without weights or tokenizers, no unfinished job, nothing twice, and one line for a folder
that is no sweep. (tests/e2e/test_kept_sweep.py carries a real sweep and continues it.)"""

import json
from pathlib import Path

from transformer_lab.sweep.keep import main


def job(sweep: Path, name: str, finished: bool) -> Path:
    folder = sweep / name
    (folder / ".hydra").mkdir(parents=True)
    (folder / ".hydra" / "overrides.yaml").write_text(f"- seed={name[-1]}\n")
    (folder / "checkpoints").mkdir()
    (folder / "checkpoints" / "last.ckpt").write_bytes(b"weights")
    (folder / "tokenizer.json").write_text("{}")
    (folder / ".run.lock").touch()
    (folder / "events.out.tfevents.1.host.1.0").write_bytes(b"scalars")
    if finished:
        (folder / "metrics.json").write_text(json.dumps({"global_step": 20}))
    return folder


def sweep_folder(root: Path) -> Path:
    sweep = root / "sweep"
    sweep.mkdir()
    for name, text in [("multirun.yaml", "hydra: {}\n"), ("sweep.json", "{}"), ("report.md", "")]:
        (sweep / name).write_text(text)
    return sweep


def test_finished_jobs_are_kept_without_weights_and_unfinished_ones_not_at_all(tmp_path, capsys):
    sweep, kept = sweep_folder(tmp_path), tmp_path / "kept"
    job(sweep, "seed=0", finished=True)
    running = job(sweep, "seed=1", finished=False)
    assert main([str(sweep), str(kept)]) == 0
    assert f"{kept}: 1 finished jobs added, 1 kept in all" in capsys.readouterr().out
    files = sorted(str(p.relative_to(kept)) for p in kept.rglob("*") if p.is_file())
    assert files == [
        "multirun.yaml",
        "seed=0/.hydra/overrides.yaml",
        "seed=0/events.out.tfevents.1.host.1.0",
        "seed=0/metrics.json",
        "sweep.json",
    ]

    (running / "metrics.json").write_text(json.dumps({"global_step": 20}))  # it ended since
    (kept / ".partial" / "half").mkdir(parents=True)  # a keep killed while copying
    assert main([str(sweep), str(kept)]) == 0
    assert f"{kept}: 1 finished jobs added, 2 kept in all" in capsys.readouterr().out
    assert sorted(p.name for p in kept.iterdir() if p.is_dir()) == ["seed=0", "seed=1"]


def test_a_folder_that_is_no_sweep_is_one_line_and_nothing_written(tmp_path, capsys):
    assert main([str(tmp_path), str(tmp_path / "kept")]) == 2
    assert capsys.readouterr().err == (
        f"error: {tmp_path}: no multirun.yaml; allowed: a sweep folder (hydra.sweep.dir)\n"
    )
    assert not (tmp_path / "kept").exists()
