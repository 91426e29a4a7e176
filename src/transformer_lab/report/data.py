"""The report's results as data, beside ``report.md``: ``report.json`` (what the report
judged: the configurations with their per-seed values, estimates and intervals, every
paired comparison with its test, the hypotheses with their raw and adjusted p-values and
verdicts, what was left out and why) and ``runs.csv`` (one row per job: its status,
outcome, overrides and final metrics), for a notebook, a spreadsheet or another lab's
tools. :func:`load_runs` gives the same runs table as a pandas DataFrame without writing
anything (pandas is the ``[analysis]`` extra)::

    from transformer_lab.report import load_runs
    runs = load_runs("outputs/multirun/<time>")
    runs[runs.status == "finished"].groupby("optim.lr")["val/loss"].agg(["mean", "std"])
"""

import csv
import json
import math
from pathlib import Path

from transformer_lab.report.comparisons import Row, metric_values
from transformer_lab.report.judgement import Judgement
from transformer_lab.report.proportions import RateDifference, rate_interval
from transformer_lab.report.statistics import estimate
from transformer_lab.report.sweep import Sweep, load_sweep
from transformer_lab.report.table import TABLE_METRICS
from transformer_lab.report.verdicts import Verdict
from transformer_lab.runs.outcome import is_learned
from transformer_lab.runs.reader import Run
from transformer_lab.training.metric_names import metric_range

JSON_FILE = "report.json"
CSV_FILE = "runs.csv"
FIRST_COLUMNS = ("job", "status", "outcome", "left_out")


def _value(text: str):
    """An override's value as a number where it is one (``"1e-2"``: 0.01), else as typed."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _status(run: Run) -> str:
    if run.finished:
        return "pruned" if run.pruned else ("diverged" if run.diverged else "finished")
    return "failed" if run.failure else "unfinished"


def runs_table(sweep: Sweep) -> list[dict]:
    """One row per job of the sweep, left-out jobs too: ``job``, ``status`` (finished,
    diverged, failed, unfinished, pruned, left out), ``outcome``, ``left_out`` (why, or what
    of it), its overrides (numbers as numbers) and its final metrics (those left out
    absent)."""
    why: dict[str, list[str]] = {}
    for item in sweep.left_out:
        why.setdefault(item.job, []).append(
            f"{item.metric}: {item.why}" if item.metric else item.why
        )
    rows = []
    for run in [*sweep.runs, *sweep.pruned]:
        row = {"job": run.name, "status": _status(run), "outcome": run.outcome}
        row["left_out"] = "; ".join(why.pop(run.name, [])) or None
        row |= {key: _value(value) for key, value in run.overrides.items()}
        scalars = (int, float, str, bool, type(None))
        row |= {k: v for k, v in (run.metrics or {}).items() if isinstance(v, scalars)}
        rows.append(row)
    rows += [
        {"job": job, "status": "left out", "outcome": None, "left_out": "; ".join(reasons)}
        for job, reasons in why.items()
    ]
    return rows


def load_runs(path: str | Path, replicate_key: str = "seed"):
    """The sweep in ``path`` as a pandas DataFrame, one row per job (:func:`runs_table`);
    the same table as the report's ``runs.csv``."""
    try:
        import pandas
    except ImportError as error:
        raise ImportError(
            "load_runs needs pandas: pip install 'transformer_lab[analysis]'"
        ) from error
    return pandas.DataFrame(runs_table(load_sweep(Path(path), replicate_key)))


def _number(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _estimate(values: list[float], metric: str) -> dict:
    if not values:
        return {"n": 0, "values": []}
    found = estimate(values, metric_range(metric))
    interval = None if found.low is None else [found.low, found.high]
    return {"mean": found.mean, "interval": interval, "n": found.n, "values": values}


def _configurations(sweep: Sweep) -> list[dict]:
    """Each configuration: its keys, runs, learned runs with the rate's exact interval,
    diverged runs and every table metric over the runs that did not diverge."""
    found = []
    for config, runs in sweep.configurations().items():
        kept = [r for r in runs if not r.diverged]
        learned = sum(r.outcome == "learned" for r in runs)
        metrics = {
            metric: _estimate([r.metrics[metric] for r in kept if metric in r.metrics], metric)
            for metric in TABLE_METRICS
            if any(metric in r.metrics for r in kept)
        }
        found.append(
            {
                "keys": dict(zip(sweep.config_keys, config, strict=True)),
                "jobs": [r.name for r in runs],
                "learned": {
                    "k": learned,
                    "n": len(runs),
                    "interval": rate_interval(learned, len(runs)),
                },
                "diverged": sum(r.diverged for r in runs),
                "metrics": metrics,
            }
        )
    return found


def _difference(comparison) -> dict:
    """The difference of a comparison, its interval and its exact test, as data."""
    found = comparison.difference
    if found is None:
        return {"estimate": None, "interval": None, "test": None}
    interval = comparison.interval
    if isinstance(found, RateDifference):
        test, paired = "Boschloo's exact test", False
        sizes = {"k_a": found.k_a, "n_a": found.n_a, "k_b": found.k_b, "n_b": found.n_b}
    else:
        test, paired, sizes = found.test.text, found.paired, {"n_a": found.n_a, "n_b": found.n_b}
    return {
        "estimate": found.estimate,
        "interval": None if interval is None else list(interval),
        "test": test,
        "paired": paired,
        **sizes,
        "p_greater": found.p_greater,
        "p_less": found.p_less,
        "smallest_p": found.smallest_p,
    }


def _comparison(row: Row) -> dict:
    return {
        "key": row.key,
        "fixed": dict(row.fixed),
        "a": row.a,
        "b": row.b,
        "metric": row.metric,
        **_difference(row.comparison),
        "p_two_sided": row.comparison.p_two_sided,
        "word": row.comparison.word,
        "hypotheses": [v.hypothesis.id for v in row.judged],
    }


def _side(verdict: Verdict, value: str, runs: list[Run]) -> dict:
    h = verdict.hypothesis
    side = {"value": value, "jobs": [r.name for r in runs]}
    if is_learned(h.metric):
        return side | {"learned": sum(r.learned(h.metric) for r in runs)}
    return side | {"values": metric_values(runs, h.metric, h.diverged_value)}


def _hypothesis(verdict: Verdict, exploratory: bool) -> dict:
    h, found = verdict.hypothesis, verdict.comparison
    power = None if found.difference is None or verdict.decided else verdict.seeds_for_power()
    return {
        "id": h.id,
        "claim": h.claim,
        "source": h.source,
        "metric": h.metric,
        "key": h.key,
        "fixed": dict(h.fixed),
        "predicted": h.predicted,
        "margin": h.margin,
        "diverged_value": h.diverged_value,
        "verdict": verdict.word,
        "decided": verdict.decided,
        "exploratory": exploratory,
        "a": _side(verdict, h.values[0], found.a),
        "b": _side(verdict, h.values[1], found.b),
        **_difference(found),
        "p": verdict.p,
        "p_other": verdict.p_other,
        "adjusted": verdict.adjusted,
        "adjusted_other": verdict.adjusted_other,
        "level": verdict.level,
        "family": verdict.family,
        "look": verdict.look,
        "looks": verdict.looks,
        "design_p": list(verdict.design_p),
        "seeds_for_power": None if power is None else power.seeds,
    }


def report_record(judged: Judgement) -> dict:
    """What ``report.json`` holds."""
    sweep = judged.sweep
    experiments = {r.overrides.get("experiment") for r in sweep.runs} - {None}
    return {
        "sweep": str(sweep.path),
        "experiment": ", ".join(sorted(experiments)) or None,
        "jobs": len(runs_table(sweep)),
        "finished": len(sweep.finished),
        "config_keys": sweep.config_keys,
        "replicate_key": sweep.replicate_key,
        "left_out": [
            {"job": item.job, "metric": item.metric, "why": item.why} for item in sweep.left_out
        ],
        "warnings": judged.warnings,
        "rule": {"changed": judged.changed_rule, "unchecked": judged.unchecked_rule},
        "hypotheses": [_hypothesis(v, judged.exploratory) for v in judged.verdicts],
        "configurations": _configurations(sweep),
        "comparisons": [_comparison(row) for row in judged.rows],
    }


def _clean(value):
    """JSON has no NaN: a value that is not a number is null."""
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def write_data(judged: Judgement) -> tuple[Path, Path]:
    """``report.json`` and ``runs.csv`` in the sweep folder."""
    folder = judged.sweep.path
    record = folder / JSON_FILE
    record.write_text(json.dumps(_clean(report_record(judged)), indent=2, allow_nan=False) + "\n")
    rows = runs_table(judged.sweep)
    columns = list(FIRST_COLUMNS)
    for row in rows:
        columns += [key for key in row if key not in columns]
    table = folder / CSV_FILE
    with table.open("w", newline="") as file:
        writer = csv.DictWriter(file, columns)
        writer.writeheader()
        writer.writerows(rows)
    return record, table
