"""Everything the report says of a sweep, decided once, before anything is written: the
runs it trusts and those it leaves out, the warnings for its top, whether its rule
predates the runs, its verdicts and its paired comparisons. ``report.md``
(:func:`transformer_lab.report.render`) and ``report.json`` (:mod:`.data`) are two
writings of one :class:`Judgement`, so they never disagree.
"""

from dataclasses import dataclass
from pathlib import Path

from transformer_lab.report.arithmetic import check_arithmetic
from transformer_lab.report.comparisons import Row, comparison_rows
from transformer_lab.report.inputs import other_code
from transformer_lab.report.progress import Progress, progress_of
from transformer_lab.report.rule import changed_rule
from transformer_lab.report.sweep import NotASweep, Sweep, load_sweep
from transformer_lab.report.verdicts import (
    Verdict,
    judge_sweep,
    read_hypotheses,
    sequential_design,
)

MIXED_CODE = (
    "**The jobs ran different code**, compared anyway (--allow-mixed-code): see "
    "*Code and versions*."
)


@dataclass(frozen=True)
class Judgement:
    sweep: Sweep
    progress: Progress  # the accuracy and target the steps are counted to
    verdicts: list[Verdict]
    rows: list[Row]  # the paired comparisons
    warnings: list[str]  # for the report's top
    changed_rule: str | None = None  # how the rule differs from the sweep's start's
    unchecked_rule: str | None = None  # why that could not be checked

    @property
    def exploratory(self) -> bool:
        return self.changed_rule is not None


def judge(
    path: Path,
    metric: str | None = None,
    target: float | None = None,
    replicate_key: str = "seed",
    allow_mixed_code: bool = False,
    allow_mixed_arithmetic: bool = False,
) -> Judgement:
    """The judgement of the sweep in ``path``, its progress read by ``metric`` at
    ``target`` (:func:`.progress.progress_of`: the sweep's own by default); NotASweep,
    MixedArithmetic, a damaged ``sequential.json`` or a ConfigError (a hypothesis the
    sweep cannot evaluate, a ``metric`` or ``target`` out of range)."""
    sweep = load_sweep(path, replicate_key, allow_mixed_code)
    if not sweep.finished:
        left = f", {len(sweep.left_out)} inputs left out" if sweep.left_out else ""
        raise NotASweep(
            f"{path}: none of its {len(sweep.runs)} jobs has finished yet (no metrics.json"
            f"{left}); nothing to report"
        )
    progress = progress_of(sweep.finished, metric, target)
    warnings = [check_arithmetic(sweep, allow_mixed_arithmetic)]
    if allow_mixed_code and other_code(sweep.finished, sweep.environments):
        warnings.append(MIXED_CODE)
    hypotheses = read_hypotheses(sweep)
    sequential = sequential_design(sweep)
    rule = changed_rule(sweep, sequential and sequential[0]) if hypotheses else (None, None)
    verdicts = judge_sweep(sweep, hypotheses, sequential)
    rows = comparison_rows(sweep, verdicts, progress.metric)
    return Judgement(sweep, progress, verdicts, rows, [w for w in warnings if w], *rule)
