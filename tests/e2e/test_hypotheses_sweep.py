"""A real small sweep from the command line: two learning rates x three seeds of
experiment=smoke, under a test experiment (``--config-dir``) that states three hypotheses;
its report's verdicts and numbers (scipy's, from the jobs' own metrics.json) and the same
text read back from the report's TensorBoard run. A hypothesis the sweep cannot evaluate
stops it before any folder. The basic launcher runs its jobs in the sweep's own process, so
the commands run in the test process."""

import json
import statistics
from pathlib import Path

import pytest
from scipy import stats
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.util.tensor_util import make_ndarray

from transformer_lab.runs.learning_curve import read_scalars

from ..command_line import python_module, run_command_here, train_command
from ..docs.examples import problems, verdict_lines

pytestmark = pytest.mark.slow

EXPERIMENT = """\
# @package _global_
defaults:
  - smoke

optim:
  schedule: constant    # the learning rate from the first step on

hypotheses:
  - id: large_lr_learns_sooner
    claim: "In 20 steps a constant learning rate of 1e-2 lowers the loss more than 1e-4."
    source: "this test"
    metric: val/loss
    key: optim.lr
    values: [1e-2, 1e-4]
    predicted: A better
  - id: small_lr_learns_sooner
    claim: "In 20 steps a constant learning rate of 1e-4 lowers the loss more than 1e-2."
    source: "this test"
    metric: val/loss
    key: optim.lr
    values: [1e-2, 1e-4]
    predicted: B better
  - id: small_lr_learns_whole_sequences
    claim: "In 20 steps a learning rate of 1e-4 gets more sequences right than 1e-2."
    source: "this test"
    metric: val/seq_acc
    key: optim.lr
    values: [1e-4, 1e-2]
    predicted: A better
"""
QUIET = ["~callbacks.progress_bar", "~callbacks.attention_maps", "~callbacks.norm_comparison"]
SWEEP = ["optim.lr=1e-2,1e-4", "seed=0,1,2"]


def sweep_command(root: Path, *overrides: str) -> list[str]:
    conf = root / "conf"
    (conf / "experiment").mkdir(parents=True, exist_ok=True)
    (conf / "experiment" / "lr_claims.yaml").write_text(EXPERIMENT)
    typed = ["-m", "--config-dir", str(conf), "experiment=lr_claims", *SWEEP, *QUIET]
    return train_command(root / "outputs", *typed, *overrides)


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    """``(sweep folder, report.md, its TensorBoard text)`` of the six-job sweep."""
    root = tmp_path_factory.mktemp("hypotheses_sweep")
    run = run_command_here(sweep_command(root), cwd=root)
    assert run.returncode == 0, run.stderr[-3000:]
    (sweep,) = (root / "outputs" / "multirun").iterdir()
    report = run_command_here(python_module("transformer_lab.report", str(sweep)), cwd=root)
    assert report.returncode == 0, report.stderr[-3000:]
    events = EventAccumulator(str(sweep / "report"), size_guidance={"tensors": 0})
    events.Reload()
    [text] = events.Tensors("report/tables/text_summary")
    return sweep, (sweep / "report.md").read_text(), make_ndarray(text.tensor_proto).item().decode()


def metrics_by_lr(sweep: Path) -> dict[str, list[dict]]:
    """The jobs' metrics.json by learning rate, in seed order."""
    jobs = sorted(sweep.glob("*/metrics.json"), key=lambda p: p.parent.name)
    found: dict[str, list[dict]] = {}
    for path in jobs:
        lr = next(p.split("=")[1] for p in path.parent.name.split(",") if p.startswith("optim.lr"))
        found.setdefault(lr, []).append(json.loads(path.read_text()))
    return found


def section(report: str, title: str) -> str:
    return report.split(f"## {title}\n")[1].split("\n## ")[0]


def test_each_hypothesis_gets_the_verdict_of_its_numbers(reported):
    sweep, report, _ = reported
    verdicts = section(report, "Hypotheses")
    assert report.index("## Hypotheses") < report.index("## Final metrics")
    assert "- **supported** `large_lr_learns_sooner`" in verdicts
    assert "- **contradicted** `small_lr_learns_sooner`" in verdicts
    # 20 steps get no sequence right at either rate: every difference 0, no test to make
    assert "- **inconclusive (no spread)** `small_lr_learns_whole_sequences`" in verdicts
    by_lr = metrics_by_lr(sweep)
    large = [m["val/loss"] for m in by_lr["0.01"]]
    small = [m["val/loss"] for m in by_lr["0.0001"]]
    ci = stats.ttest_rel(large, small).confidence_interval(0.95)  # paired by seed 0, 1, 2
    difference = statistics.fmean(large) - statistics.fmean(small)
    assert ci.high < 0  # the large rate's loss is lower on every reading
    assert f"A − B {difference:+.4f} [{ci.low:+.4f}, {ci.high:+.4f}] (paired, 3 seeds)" in verdicts
    p = stats.ttest_rel(large, small, alternative="less").pvalue  # one-sided: A's loss lower
    assert f"one-sided t p = {p:.2g}, Holm-adjusted {min(1, 3 * p):.2g}" in verdicts


def test_docs_sweeps_md_shows_these_verdicts(reported):
    """docs/sweeps.md quotes this sweep's verdicts: its words, and its numbers within the
    tolerance it states (``python -m tests.docs.regenerate sweeps-verdicts`` writes them)."""
    _, report, _ = reported
    found = problems("sweeps-verdicts", verdict_lines(report))
    assert not found, "\n".join(found)


def test_the_report_is_in_its_tensorboard_run_too(reported):
    _, report, text = reported
    for title in ("Hypotheses", "Final metrics", "Training stability", "Paired comparisons"):
        assert section(report, title) in text, title


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
