"""The tools that read a sweep run without Lightning: ``sweep.keep`` and the report, on real
jobs (four of the kept ``multi30k_warmup_bleu`` sweep, its own records beside them), in a
process where ``lightning`` and ``torchmetrics`` cannot be imported. Importing Lightning
was ~5 of the ~6 s either took to start; neither trains or reads a checkpoint."""

import shutil
from pathlib import Path

from .command_line import python_code, run_command

KEPT = Path(__file__).resolve().parents[1] / "docs" / "runs" / "multi30k_warmup_bleu"
JOBS = [
    f"optim.lr={lr},recipe={recipe},seed=3100"
    for lr in ("0.0005", "0.001")
    for recipe in ("post_no_warmup", "post_warmup_400")
]
RUN_BOTH = """\
import runpy
for module, *arguments in (("sweep.keep", "sweep", "kept"), ("report", "kept")):
    sys.argv = [module, *arguments]
    try:
        runpy.run_module(f"transformer_lab.{module}", run_name="__main__")
    except SystemExit as end:
        assert not end.code, (module, end.code)
"""


def test_keep_and_the_report_read_a_sweep_without_importing_lightning(tmp_path):
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    for record in ("multirun.yaml", "sweep.json", "sequential.json"):
        shutil.copy(KEPT / record, sweep)
    for job in JOBS:
        shutil.copytree(KEPT / job, sweep / job)
    done = run_command(python_code(RUN_BOTH, hidden=["lightning", "torchmetrics"]), tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "4 finished jobs added" in done.stdout
    kept = tmp_path / "kept"
    assert sorted(p.name for p in kept.iterdir() if "=" in p.name) == sorted(JOBS)
    report = (kept / "report.md").read_text()
    assert "post_warmup_higher_bleu_on_multi30k" in report
    assert (kept / "val_loss.png").stat().st_size > 0
    assert list((kept / "report").glob("events.out.tfevents.*"))  # the report's TensorBoard run
