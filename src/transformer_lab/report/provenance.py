"""The report's "Code and versions" section: what the sweep's jobs ran, said once.

Every job leaves ``environment.json``. The libraries and the machine are listed once per
sweep (or per distinct set, if jobs differ there); a sweep whose jobs ran different code,
a different transformer_lab version, code (git's tree of src/) or dirty state (a job
resumed on other code counts too), gets a warning naming which jobs ran what, since its
differences between configurations may then be differences between code.
"""

from transformer_lab.report.inputs import code_text
from transformer_lab.report.sweep import Sweep
from transformer_lab.runs.environment import PACKAGES, code_identities

SHOWN = ("python", "transformer_lab", *PACKAGES, "platform", "cpu", "gpus", "torch_threads")


def provenance_section(sweep: Sweep) -> list[str]:
    """Markdown lines, or none when no job wrote ``environment.json``."""
    records = sweep.environments  # every job's that parses, those left out too
    if not records:
        return []
    lines = ["", "## Code and versions", ""]
    codes: dict[tuple, list[str]] = {}
    for name, record in records.items():
        for identity in code_identities(record):
            codes.setdefault(identity, []).append(name)
    if len(codes) > 1:
        lines += [
            "**Warning: the jobs of this sweep ran different code**; differences "
            "between configurations may be differences between code:",
            "",
        ]
        lines += [
            f"- {code_text(frozenset([code]))}: {_names(names)}"
            for code, names in sorted(codes.items(), key=str)
        ]
        lines += ["", "Jobs of other code than most of the sweep's are left out (*Left out*)."]
    else:
        lines.append(f"Every job ran {code_text(frozenset(codes))}.")
    rows = sorted({tuple(_cell(record.get(key)) for key in SHOWN) for record in records.values()})
    lines += ["", f"| {' | '.join(SHOWN)} |", f"|{' --- |' * len(SHOWN)}"]
    lines += [f"| {' | '.join(row)} |" for row in rows]  # one row unless the jobs differ
    return lines


def _cell(value) -> str:
    if isinstance(value, list):
        return ", ".join(value) or "none"
    return "?" if value is None else str(value)


def _names(names: list[str], most: int = 3) -> str:
    """The jobs of one code, at most ``most`` by name: a sweep has dozens."""
    shown = ", ".join(f"`{n}`" for n in names[:most])
    return shown if len(names) <= most else f"{len(names)} jobs: {shown}, ..."
