"""The lab-wide family: every hypothesis of several sweeps judged together.

Each sweep holds its own error rate: at most 5% chance of any false verdict among its own
hypotheses. Across the lab's seven bundled sweeps and their fourteen or so hypotheses, that
leaves the chance of a false verdict somewhere in docs/results.md's summary near 1 in 2.
So the summary adjusts every hypothesis together once more, beside each sweep's own
verdict: Holm's method over both one-sided p-values of every hypothesis of every sweep
given, each as valid for its whole design (``design_p`` in ``report.json``: a sequential
sweep's p-value at the look that judged it, times its looks). A verdict that stands
across the lab stands with at most 5% chance of any false one in the whole table. A
hypothesis its sweep judged as exploratory (its rule changed after the runs) is no member.

    python -m transformer_lab.report.lab outputs/multirun/warmup outputs/multirun/<sweep> ...
    python -m transformer_lab.report.lab <sweeps> --into docs/results.md

reads each sweep's ``report.json`` (run the report first) and prints the summary table, or
writes it into a Markdown file between ``<!-- lab-summary:begin -->`` and
``<!-- lab-summary:end -->``.
"""

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from transformer_lab.report.data import JSON_FILE
from transformer_lab.report.family import holm
from transformer_lab.report.table import markdown
from transformer_lab.sweep.sequential import LEVEL

BEGIN, END = "<!-- lab-summary:begin -->", "<!-- lab-summary:end -->"


class NoRecord(ValueError):
    """A sweep without a readable ``report.json``, or a file without the summary's markers."""


@dataclass(frozen=True)
class LabVerdict:
    experiment: str
    jobs: int
    hypothesis: dict  # report.json's entry
    adjusted: float | None = None  # Holm over the lab; None for an exploratory one
    adjusted_other: float | None = None

    @property
    def word(self) -> str:
        if self.adjusted is None:
            return "exploratory: not a member"
        if self.hypothesis["verdict"].startswith("inconclusive ("):
            return self.hypothesis["verdict"]  # untested in its sweep: no more here
        if self.adjusted <= LEVEL:
            return "supported"
        if self.adjusted_other <= LEVEL:
            return "contradicted"
        return "inconclusive"


def read_record(sweep: Path) -> dict:
    path = sweep / JSON_FILE
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise NoRecord(
            f"{path}: no such file; allowed: a sweep the report has judged "
            f"(python -m transformer_lab.report {sweep})"
        ) from None
    except ValueError as error:
        raise NoRecord(
            f"{path} is damaged ({type(error).__name__}); run the report again"
        ) from None


def lab_verdicts(sweeps: list[Path]) -> list[LabVerdict]:
    """Every hypothesis of the ``sweeps``, adjusted together (the exploratory ones not)."""
    found = []
    for sweep in sweeps:
        record = read_record(sweep)
        experiment = record.get("experiment") or sweep.name
        found += [LabVerdict(experiment, record["jobs"], h) for h in record["hypotheses"]]
    members = [v for v in found if not v.hypothesis["exploratory"]]
    p = [v.hypothesis["design_p"][0] for v in members]
    q = [v.hypothesis["design_p"][1] for v in members]
    adjusted = holm(p + q)
    k = len(members)
    by_member = {id(v): (adjusted[i], adjusted[k + i]) for i, v in enumerate(members)}
    return [
        LabVerdict(v.experiment, v.jobs, v.hypothesis, *by_member.get(id(v), (None, None)))
        for v in found
    ]


def summary(verdicts: list[LabVerdict]) -> str:
    """The summary's Markdown: a sentence on what it guarantees, then the table."""
    members = sum(v.adjusted is not None for v in verdicts)
    rows = [
        [
            f"`{v.experiment}`",
            str(v.jobs),
            f"`{v.hypothesis['id']}`",
            v.hypothesis["verdict"],
            f"{v.hypothesis['design_p'][0]:.2g}",
            "—" if v.adjusted is None else f"{v.adjusted:.2g}",
            f"**{v.word}**" if v.word in ("supported", "contradicted") else v.word,
        ]
        for v in verdicts
    ]
    header = [
        "experiment",
        "jobs",
        "hypothesis",
        "in its sweep",
        "p (its design)",
        "Holm-adjusted over the lab",
        "over the lab",
    ]
    return (
        f"Every hypothesis of these {len({v.experiment for v in verdicts})} sweeps judged "
        f"together: Holm's method over both one-sided p-values of each of the {members} "
        f"hypotheses ({2 * members} tests), each p-value valid for its sweep's whole design (a "
        "sequential sweep's times its looks), so that the chance of any false verdict in "
        f"the whole table is at most {LEVEL:.0%}; *in its sweep* is the sweep's own verdict, "
        "at 5% among its own hypotheses. Generated by `python -m transformer_lab.report.lab "
        "<sweeps> --into docs/results.md`.\n\n" + markdown(header, rows)
    )


def write_into(path: Path, text: str) -> None:
    """``text`` between the summary's markers in the Markdown file ``path``."""
    found = path.read_text()
    if BEGIN not in found or END not in found.split(BEGIN, 1)[1]:
        raise NoRecord(f"{path}: no {BEGIN} ... {END} to write the summary between")
    before, rest = found.split(BEGIN, 1)
    after = rest.split(END, 1)[1]
    path.write_text(f"{before}{BEGIN}\n{text}\n{END}{after}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m transformer_lab.report.lab",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("sweeps", type=Path, nargs="+", help="sweep folders the report judged")
    parser.add_argument("--into", type=Path, help="a Markdown file with the summary's markers")
    args = parser.parse_args(argv)
    try:
        text = summary(lab_verdicts(args.sweeps))
        if args.into:
            write_into(args.into, text)
    except NoRecord as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
