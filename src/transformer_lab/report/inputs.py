"""What the report leaves out of its statistics, each named and counted: the inputs a
reviewer would not trust.

- A job whose record is damaged: a file of the run folder that is empty (a write that
  never finished: a full disk, a kill) or that does not parse. The whole job is left out,
  named with the file. (Until ``runs/`` has a reader that names a damaged file itself,
  :func:`damaged_record` checks each record here first; ``read_run`` then reads a folder
  that parses.)
- A job without ``.hydra/config.yaml``, which Hydra writes before the job starts: what it
  ran, and which hypotheses it was run to test, is unknown.
- A job that ran other code than the sweep's (another transformer_lab version, code or
  dirty state, at any of its starts; the code is git's tree of ``src/``, so a commit of the
  docs alone changes none): its difference from the others may be the code's.
  The sweep's code is that of most of its finished jobs (of the earliest started among
  equals); ``--allow-mixed-code`` keeps the others in the statistics, said at the top.
- A metric that is not a number (NaN, infinite) in a run that did not diverge, or that a
  run lacks while the other runs of its configuration report it: left out of that
  metric's statistics (the run's other metrics stay), named. A diverged run has no final
  metrics to judge by anyway: it is counted as diverged.
"""

import json
import math
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from transformer_lab.records import CONFIG_LOADER
from transformer_lab.runs.environment import code_identities
from transformer_lab.runs.reader import Run

# every record of a run folder the report reads, as parsed by its reader
RECORDS = (
    ".hydra/overrides.yaml",
    ".hydra/config.yaml",
    "metrics.json",
    "failed.json",
    "config_resolved.yaml",
    "environment.json",
    "norm_comparison.json",
)
CONFIG = ".hydra/config.yaml"


@dataclass(frozen=True)
class LeftOut:
    """``job`` left out of the statistics (of ``metric``'s only, where given), and why."""

    job: str
    why: str
    metric: str | None = None

    @property
    def line(self) -> str:
        where = f"`{self.metric}` of `{self.job}`" if self.metric else f"`{self.job}`"
        return f"- {where}: {self.why}"


def _parse(path: Path):
    text = path.read_text()
    return json.loads(text) if path.suffix == ".json" else yaml.load(text, Loader=CONFIG_LOADER)


def damaged_record(folder: Path) -> str | None:
    """Which record of the job ``folder`` is damaged and how (``"metrics.json is empty
    (0 bytes)"``), or None when every one it has parses."""
    for name in RECORDS:
        path = folder / name
        if not path.is_file():
            continue
        if not path.read_bytes().strip():
            return f"{name} is empty ({path.stat().st_size} bytes): a write that did not finish"
        try:
            parsed = _parse(path)
        except (ValueError, yaml.YAMLError) as error:  # JSON's and UTF-8's are ValueErrors
            return f"{name} is damaged ({type(error).__name__}: {str(error).splitlines()[0]})"
        expected = list if name.endswith("overrides.yaml") else dict
        if not isinstance(parsed, expected):
            return f"{name} is damaged (a {type(parsed).__name__}, not a {expected.__name__})"
    return None


def read_environment(run: Run) -> dict | None:
    """The job's ``environment.json`` (checked by :func:`damaged_record`), None if absent."""
    path = run.path / "environment.json"
    return json.loads(path.read_text()) if path.is_file() else None


def _code(identity: tuple) -> str:
    """One :func:`~transformer_lab.runs.environment.code_identity` in words: the code as
    git's tree of ``src/`` (``git rev-parse <commit>:src`` gives a commit's), or an older
    record's commit."""
    version, kind, name, changes = identity
    if name is None:
        return f"transformer_lab {version} (not from a git checkout)"
    what = "src/ tree" if kind == "code" else "commit"
    if isinstance(changes, str):  # their hash: which changes
        edited = f" with changes {changes[:8]}"
    else:  # an older record's whether
        edited = " with changes" if changes else ""
    return f"transformer_lab {version}, {what} {name[:12]}{edited}"


def code_text(identities: frozenset) -> str:
    return " and ".join(sorted(_code(identity) for identity in identities))


def other_code(runs: list[Run], environments: dict[str, dict]) -> dict[str, str]:
    """The finished runs that ran other code than most of them: ``{name: why}``."""
    codes = {
        run.name: frozenset(code_identities(environments[run.name]))
        for run in runs
        if run.finished and run.name in environments
    }
    if len(set(codes.values())) < 2:
        return {}
    counts = Counter(codes.values())
    order = sorted(runs, key=lambda r: str(environments.get(r.name, {}).get("start_time")))
    started = [codes[r.name] for r in order if r.name in codes]
    sweep_code = max(counts, key=lambda code: (counts[code], -started.index(code)))
    return {
        name: f"ran {code_text(code)}; the sweep's other {counts[sweep_code]} jobs ran "
        f"{code_text(sweep_code)}"
        for name, code in codes.items()
        if code != sweep_code
    }


def _not_numbers(run: Run) -> list[str]:
    return sorted(
        key
        for key, value in run.metrics.items()
        if isinstance(value, float) and not math.isfinite(value)
    )


def without_bad_numbers(run: Run) -> tuple[Run, list[LeftOut]]:
    """The finished ``run`` with its metrics that are not a number left out (named, where
    it did not diverge)."""
    bad = _not_numbers(run)
    if not bad:
        return run, []
    kept = {key: value for key, value in run.metrics.items() if key not in bad}
    named = [
        LeftOut(run.name, f"{run.metrics[key]} in metrics.json, not a number", key)
        for key in bad
        if not run.diverged
    ]
    return replace(run, metrics=kept), named


def missing_metrics(configurations: dict[tuple, list[Run]], watched: set[str]) -> list[LeftOut]:
    """The ``watched`` metrics a run that did not diverge lacks while another of its
    configuration reports it."""
    missing = []
    for runs in configurations.values():
        trained = [r for r in runs if not r.diverged]
        reported = {m for r in trained for m in r.metrics if m in watched}
        for run in trained:
            for metric in sorted(reported - set(run.metrics)):
                why = "missing from metrics.json, which the other runs of its configuration have"
                missing.append(LeftOut(run.name, why, metric))
    return missing
