"""The report never crashes on a sweep the lab could produce: over random run tables (any
mix of finished, diverged, failed, unfinished and damaged jobs, jobs without their config,
metrics that are NaN, missing or constant, one seed or several) and random hypotheses
(either direction or an equivalence, on a metric or the outcome), it either writes
report.md, report.json and runs.csv with no NaN printed, or refuses in one line with exit
status 2 (nothing finished, or a rule the runs cannot evaluate)."""

import json
import math
import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transformer_lab.report import main

from .conftest import hand_made_job

KINDS = (
    "finished",
    "finished",
    "finished",
    "diverged",
    "failed",
    "unfinished",
    "damaged",
    "no config",
)
VALUES = st.one_of(
    st.floats(0.0, 1.0),
    st.just(0.0),  # a stalled run, the same at every seed
    st.just(float("nan")),
    st.none(),  # missing from metrics.json
)
RULE = st.fixed_dictionaries(
    {
        "metric": st.sampled_from(["val/loss", "val/seq_acc", "outcome/learned"]),
        "predicted": st.sampled_from(["A better", "B better", "equivalent"]),
        "diverged_value": st.sampled_from([None, 0.0]),
    }
)
JOB = st.tuples(st.sampled_from(KINDS), VALUES, VALUES, st.booleans())


def hypotheses_yaml(rule: dict) -> str:
    predicted = rule["predicted"]
    if rule["metric"] == "outcome/learned" and predicted == "equivalent":
        predicted = "A better"  # refused at the sweep's start: not a run table to render
    lines = [
        "hypotheses:",
        "  - id: h",
        "    claim: c",
        "    source: s",
        f"    metric: {rule['metric']}",
        "    key: optim.lr",
        "    values: [0.01, 0.001]",
        f"    predicted: {predicted}",
    ]
    if predicted == "equivalent":
        lines.append("    margin: 0.05")
    if rule["diverged_value"] is not None and rule["metric"] != "outcome/learned":
        lines.append(f"    diverged_value: {rule['diverged_value']}")
    return "\n".join(lines) + "\n"


def write_job(folder: Path, lr: str, seed: int, job: tuple, config: str) -> None:
    kind, loss, acc, learned = job
    metrics = {"diverged": kind == "diverged", "outcome": "learned" if learned else "stalled"}
    metrics |= {"diverged_at_step": 5} if kind == "diverged" else {}
    metrics |= {} if loss is None else {"val/loss": loss}
    metrics |= {} if acc is None else {"val/seq_acc": acc}
    if kind == "diverged":
        metrics["outcome"] = "diverged"
    path = hand_made_job(folder, {"optim.lr": lr, "seed": seed}, metrics, config=config)
    if kind == "failed":
        (path / "metrics.json").unlink()
        (path / "failed.json").write_text(json.dumps({"error": "E", "message": "m"}))
    elif kind == "unfinished":
        (path / "metrics.json").unlink()
    elif kind == "damaged":
        (path / "metrics.json").write_text("")
    elif kind == "no config":
        (path / ".hydra" / "config.yaml").unlink()


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
@given(
    jobs=st.dictionaries(
        st.tuples(st.sampled_from(["0.01", "0.001", "0.1"]), st.integers(0, 3)),
        JOB,
        min_size=1,
        max_size=10,
    ),
    rule=st.one_of(st.none(), RULE),
)
def test_the_report_renders_any_run_table_or_refuses_in_one_line(jobs, rule, capsys):
    with tempfile.TemporaryDirectory() as folder:
        sweep = Path(folder)
        config = hypotheses_yaml(rule) if rule else ""
        for (lr, seed), job in jobs.items():
            write_job(sweep, lr, seed, job, config)
        status = main([str(sweep)])
        _, err = capsys.readouterr()  # read and reset each example
        if status == 2:
            assert err.startswith("error: ") and err.count("\n") == 1, err
            return
        assert status == 0, err
        report = (sweep / "report.md").read_text()
        sections = report.split("\n## ")
        statistics = "\n".join(s for s in sections if not s.startswith("Left out"))
        assert re.search(r"\bnan\b", statistics.lower()) is None  # named only where left out
        record = json.loads((sweep / "report.json").read_text())  # strict JSON: no NaN
        for hypothesis in record["hypotheses"]:
            p = hypothesis["p"]
            assert p is not None and 0.0 <= p <= 1.0 and not math.isnan(p)
        assert (sweep / "runs.csv").read_text().count("\n") == len(jobs) + 1
