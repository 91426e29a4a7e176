"""Whether the sweep's jobs ran the same arithmetic: a seed's trajectory depends on the
torch version, the processor (its model and instruction set) and the number of threads,
so two runs of one seed on two machines differ by more than their settings. A sweep whose
jobs differ there is not compared unless the user says so (``--allow-mixed-arithmetic``):
its differences between configurations might be the machine's.

Read from each finished job's ``environment.json`` (every start of it, a resumed run's
too: ``resumed``): :data:`FIELDS`; a job without that record gives its ``torch_threads``
from ``metrics.json``. A field no job records is not compared.
"""

from transformer_lab.report.sweep import Sweep
from transformer_lab.runs.reader import Run

FIELDS = ("torch", "cpu", "cpu_flags", "torch_threads", "gpus")
THREADS = "torch_threads"


class MixedArithmetic(ValueError):
    """The sweep's jobs ran different arithmetic, and the report was not told to compare
    them anyway."""


def _text(value) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "none"
    return str(value)


def _values(run: Run, environment: dict | None, field: str) -> set[str]:
    """The values of ``field`` at the run's starts."""
    if environment is None:
        found = (run.metrics or {}).get(field) if field == THREADS else None
        return set() if found is None else {_text(found)}
    starts = [environment, *environment.get("resumed", [])]
    return {_text(start[field]) for start in starts if start.get(field) is not None}


def differing(sweep: Sweep) -> dict[str, dict[str, list[str]]]:
    """``{field: {value: [jobs]}}`` for every field of :data:`FIELDS` whose value differs
    between the sweep's finished jobs (a job resumed on another machine has two)."""
    found = {}
    for field in FIELDS:
        jobs: dict[str, list[str]] = {}
        for run in sweep.finished:
            for value in _values(run, sweep.environments.get(run.name), field):
                jobs.setdefault(value, []).append(run.name)
        if len(jobs) > 1:
            found[field] = dict(sorted(jobs.items()))
    return found


def _jobs(names: list[str], most: int = 2) -> str:
    shown = ", ".join(f"`{n}`" for n in names[:most])
    more = f", ... ({len(names)} jobs)" if len(names) > most else ""
    return f"{shown}{more}"


def describe(fields: dict[str, dict[str, list[str]]]) -> str:
    """``"torch_threads 1 (`a`, `b`, ... (3 jobs)) and 2 (`c`)"``, per field."""
    return "; ".join(
        f"{field} " + " and ".join(f"{value} ({_jobs(names)})" for value, names in values.items())
        for field, values in fields.items()
    )


def check_arithmetic(sweep: Sweep, allow_mixed: bool) -> str | None:
    """:class:`MixedArithmetic` naming what differs, unless ``allow_mixed``; then the
    report's warning (None where every job ran the same arithmetic)."""
    fields = differing(sweep)
    if not fields:
        return None
    what = describe(fields)
    if not allow_mixed:
        raise MixedArithmetic(
            f"{sweep.path}: its jobs ran different arithmetic: {what}; a seed's numbers "
            "depend on it, so differences between configurations may be the machine's; "
            "allowed: the jobs of one arithmetic (rerun the others where the rest ran), or "
            "--allow-mixed-arithmetic to compare them anyway"
        )
    return (
        f"**The jobs ran different arithmetic**, compared anyway (--allow-mixed-arithmetic): "
        f"{what}. A seed's numbers depend on it: differences between configurations may be "
        "the machine's."
    )
