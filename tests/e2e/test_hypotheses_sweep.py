"""The README's worked sweep, as the README writes it (its experiment file and its command,
read from README.md): two learning rates x six seeds of experiment=smoke under one stated
hypothesis; its report's verdict and numbers (scipy's exact permutation test and Holm's
adjustment, from the jobs' own metrics.json), the same text read back from the report's
TensorBoard run, and every section agreeing with the verdict: the learning-rate window
reports the tie the runs are in (no "best" among equals) and the paired comparison of
the loss names the hypothesis's verdict. A hypothesis the sweep cannot evaluate stops it
before any folder. The basic launcher runs its jobs in the sweep's own process, so the
commands run in the test process."""

import csv
import json
import re
import shlex
import statistics
from pathlib import Path

import pytest
from scipy import stats
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.util.tensor_util import make_ndarray

from transformer_lab.runs.learning_curve import read_scalars

from ..command_line import python_module, run_command_here, train_command
from ..docs.examples import problems, verdict_lines
from ..report.conftest import scipy_p

pytestmark = pytest.mark.slow

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()
WORKED = README.split("## A worked sweep, with its report")[1]
EXPERIMENT = WORKED.split("<<'YAML'\n")[1].split("\nYAML\n")[0] + "\n"
COMMAND = shlex.split(re.search(r"^python -m transformer_lab\.train -m (.*)$", WORKED, re.M)[1])
QUIET = ["~callbacks.progress_bar", "~callbacks.attention_maps", "~callbacks.norm_comparison"]


def sweep_command(root: Path, *overrides: str) -> list[str]:
    conf = root / "my_conf"
    (conf / "experiment").mkdir(parents=True, exist_ok=True)
    (conf / "experiment" / "lr_claim.yaml").write_text(EXPERIMENT)
    typed = [
        f"--config-dir={conf}" if a == "my_conf" else a for a in COMMAND if a != "--config-dir"
    ]
    return train_command(root / "outputs", "-m", *typed, *QUIET, *overrides)


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    """``(sweep folder, report.md, its TensorBoard text)`` of the README's twelve jobs."""
    root = tmp_path_factory.mktemp("readme_sweep")
    run = run_command_here(sweep_command(root), cwd=root)
    assert run.returncode == 0, run.stderr[-3000:]
    (sweep,) = (root / "outputs" / "multirun").iterdir()
    report = run_command_here(python_module("transformer_lab.report", str(sweep)), cwd=root)
    assert report.returncode == 0, report.stderr[-3000:]
    events = EventAccumulator(str(sweep / "report"), size_guidance={"tensors": 0})
    events.Reload()
    [text] = events.Tensors("report/tables/text_summary")
    return sweep, (sweep / "report.md").read_text(), make_ndarray(text.tensor_proto).item().decode()


def losses_by_lr(sweep: Path) -> dict[str, list[float]]:
    """The jobs' final val/loss by learning rate, in seed order."""
    found: dict[str, list[tuple[int, float]]] = {}
    for path in sweep.glob("*/metrics.json"):
        settings = dict(part.split("=") for part in path.parent.name.split(","))
        loss = json.loads(path.read_text())["val/loss"]
        found.setdefault(settings["optim.lr"], []).append((int(settings["seed"]), loss))
    return {lr: [loss for _, loss in sorted(pairs)] for lr, pairs in found.items()}


def section(report: str, title: str) -> str:
    return report.split(f"## {title}\n")[1].split("\n## ")[0]


def test_the_readme_runs_the_sweep_it_shows():
    assert "id: large_lr_learns_sooner" in EXPERIMENT
    assert "seed=0,1,2,3,4,5" in COMMAND and "optim.lr=1e-2,1e-4" in COMMAND


def test_the_hypothesis_gets_the_verdict_of_its_exact_test(reported):
    sweep, report, _ = reported
    verdicts = section(report, "Hypotheses")
    assert report.index("## Hypotheses") < report.index("## Final metrics")
    assert "- **supported** `large_lr_learns_sooner`" in verdicts
    by_lr = losses_by_lr(sweep)
    large, small = by_lr["0.01"], by_lr["0.0001"]
    ci = stats.ttest_rel(large, small).confidence_interval(0.95)  # paired by seed 0-5
    difference = statistics.fmean(large) - statistics.fmean(small)
    assert f"A − B {difference:+.4f} [{ci.low:+.4f}, {ci.high:+.4f}] (paired, 6 seeds)" in verdicts
    p = scipy_p(large, small, "samples", "less")  # one-sided: A's loss lower
    assert p == 1 / 64  # the large rate's loss is lower at every seed
    assert (
        "exact sign-flip test (all 64 sign assignments): one-sided p = 0.016 (other direction "
        "1), Holm-adjusted 0.031 (1) of 2 tests against 0.05; predicted: A better."
    ) in verdicts
    shown = README.split("```\n- **supported**")[1].split("```")[0]
    assert "n=6; B = 0.0001: " in shown and "Holm-adjusted 0.031 (1) of 2 tests" in shown


def test_every_section_agrees_with_the_verdict_and_a_tie_is_a_tie(reported):
    _, report, _ = reported
    window = section(report, "Learning-rate window")
    assert "| tie: 0.0001, 0.01 (val/seq_acc 0.000 each) |" in window  # no best among equals
    comparisons = section(report, "Paired comparisons")
    [loss] = [line for line in comparisons.splitlines() if "| val/loss |" in line]
    assert loss.endswith("| **B better**; hypothesis `large_lr_learns_sooner`: supported |")
    assert "tie: 0.0001, 0.01 (val/seq_acc 0.000 each)" in README  # as the README says


def test_docs_sweeps_md_shows_these_verdicts(reported):
    """docs/sweeps.md quotes this sweep's verdicts: its words, and its numbers within the
    tolerance it states (``python -m tests.docs.regenerate sweeps-verdicts`` writes them)."""
    _, report, _ = reported
    found = problems("sweeps-verdicts", verdict_lines(report))
    assert not found, "\n".join(found)


def test_the_report_is_in_its_tensorboard_run_and_its_data_files(reported):
    sweep, report, text = reported
    for title in ("Hypotheses", "Final metrics", "Training stability", "Paired comparisons"):
        assert section(report, title) in text, title
    record = json.loads((sweep / "report.json").read_text())
    assert record["hypotheses"][0]["verdict"] == "supported"
    with (sweep / "runs.csv").open() as file:
        assert len(list(csv.DictReader(file))) == 12


def test_each_job_records_the_area_under_its_curve_and_how_it_trained(reported):
    sweep, _, _ = reported
    for path in sweep.glob("*/metrics.json"):
        written = json.loads(path.read_text())
        curve = read_scalars(path.parent)["val/seq_acc"]
        assert [step for step, _ in curve] == [9, 19]  # smoke validates every 10 steps
        assert written["val/seq_acc_auc"] == pytest.approx(statistics.fmean(v for _, v in curve))
        assert 0.0 <= written["train/clip_fraction"] <= 1.0
        assert written["train/grad_norm_max"] > 0.0
        assert written["train/loss_spikes"] >= 0.0


def test_a_hypothesis_the_sweep_cannot_evaluate_stops_it_before_any_folder(tmp_path):
    command = sweep_command(tmp_path, "hypotheses.0.key=model.d_model")
    run = run_command_here(command, cwd=tmp_path)
    assert run.returncode == 2
    errors = [line for line in run.stderr.splitlines() if line.startswith("error")]
    assert errors == [
        "error: hypotheses.large_lr_learns_sooner.key='model.d_model': the sweep does not vary "
        "it; allowed: optim.lr, or hypotheses=[] to judge none"
    ]
    assert not (tmp_path / "outputs").exists()
