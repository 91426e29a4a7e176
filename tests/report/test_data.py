"""The report's results as data: ``report.json`` holds the numbers ``report.md`` prints
(per-seed values, estimates, intervals, tests, raw and adjusted p-values, verdicts),
``runs.csv`` one row per job, and ``load_runs`` the same table as a pandas DataFrame, on
which docs/sweeps.md's five-line analysis runs."""

import csv
import json

import pandas as pd
import pytest
from scipy import stats

from transformer_lab.report import load_runs, main
from transformer_lab.report.sweep import load_sweep
from transformer_lab.report.verdicts import judge_all, read_hypotheses

from .conftest import scipy_p
from .test_verdicts import AUC, auc, make_sweep


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    folder = make_sweep(tmp_path_factory.mktemp("data"))
    assert main([str(folder)]) == 0
    return folder


@pytest.fixture(scope="module")
def record(sweep) -> dict:
    return json.loads((sweep / "report.json").read_text())


def test_report_json_holds_each_verdict_with_its_values_tests_and_p_values(sweep, record):
    loaded = load_sweep(sweep)
    judged = judge_all(loaded, read_hypotheses(loaded))
    assert [h["id"] for h in record["hypotheses"]] == [v.hypothesis.id for v in judged]
    first = record["hypotheses"][0]
    assert first["verdict"] == "supported" and first["decided"] and not first["exploratory"]
    assert first["a"]["value"] == "pre" and first["a"]["values"] == auc("pre", "constant")
    assert first["b"]["values"] == auc("post", "constant")
    assert first["test"] == "exact sign-flip test (all 256 sign assignments)"
    assert first["p"] == scipy_p(
        auc("pre", "constant"), auc("post", "constant"), "samples", "greater"
    )
    assert (first["adjusted"], first["family"], first["level"]) == (
        pytest.approx(judged[0].adjusted),
        8,
        0.05,
    )
    ci = stats.ttest_rel(auc("pre", "constant"), auc("post", "constant")).confidence_interval()
    assert first["interval"] == pytest.approx([ci.low, ci.high])
    untested = record["hypotheses"][3]
    assert untested["verdict"] == "inconclusive (n=1)" and untested["estimate"] is None


def test_report_json_holds_each_configuration_and_comparison(record):
    configurations = {tuple(c["keys"].values()): c for c in record["configurations"]}
    post = configurations[("post", "constant")]
    assert post["metrics"]["val/seq_acc_auc"]["values"] == auc("post", "constant")
    assert post["metrics"]["val/seq_acc_auc"]["n"] == len(AUC[("post", "constant")])
    assert configurations[("post", "linear_warmup")]["diverged"] == 1
    [row] = [
        c
        for c in record["comparisons"]
        if (c["key"], c["a"], c["b"], c["metric"])
        == ("model.norm", "post", "pre", "val/seq_acc_auc")
        and c["fixed"] == {"optim.schedule": "constant"}
    ]
    assert row["word"] == "B better" and row["p_two_sided"] == pytest.approx(2 / 256)
    assert row["hypotheses"] == ["pre_learns_faster", "post_learns_faster"]


def test_runs_csv_has_one_row_per_job_with_its_overrides_and_metrics(sweep):
    with (sweep / "runs.csv").open() as file:
        rows = list(csv.DictReader(file))
    assert len(rows) == sum(len(runs) for runs in AUC.values())
    diverged = [r for r in rows if r["status"] == "diverged"]
    assert [r["job"] for r in diverged] == ["model.norm=post,optim.schedule=linear_warmup,seed=2"]
    assert rows[0].keys() >= {"job", "status", "outcome", "model.norm", "seed", "val/seq_acc_auc"}


def test_load_runs_gives_the_runs_as_a_dataframe_for_a_five_line_analysis(sweep):
    runs = load_runs(sweep)
    assert isinstance(runs, pd.DataFrame) and len(runs) == 30
    assert runs["seed"].dtype.kind == "i"  # overrides that are numbers are numbers
    # docs/sweeps.md's five lines
    trained = runs[runs.status == "finished"]
    table = trained.groupby(["model.norm", "optim.schedule"])["val/seq_acc_auc"].agg(
        ["mean", "count"]
    )
    pre = trained[trained["model.norm"] == "pre"].pivot(
        index="seed", columns="optim.schedule", values="val/seq_acc_auc"
    )
    assert table.loc[("post", "constant"), "mean"] == pytest.approx(
        sum(auc("post", "constant")) / 8
    )
    assert list(pre.columns) == ["constant", "linear_warmup"] and len(pre) == 8


def test_left_out_jobs_are_rows_of_their_own(tmp_path):
    folder = make_sweep(tmp_path)
    damaged = next(folder.glob("model.norm=sandwich,optim.schedule=constant,*"))
    (damaged / "metrics.json").write_text("")
    runs = load_runs(folder)
    [row] = runs[runs.status == "left out"].to_dict("records")
    assert row["job"] == damaged.name
    assert row["left_out"] == "metrics.json is empty (0 bytes): a write that did not finish"
