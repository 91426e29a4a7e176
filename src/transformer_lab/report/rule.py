"""Whether the rule the report judges by is the rule the runs were started with.

A verdict is a test of a claim stated before the data existed; a rule written or changed
after seeing the runs (a hypothesis added, a margin widened, an outcome threshold moved, a
sequential sweep's level or looks) is a test of nothing, however small its p-value. The
sweep records the fingerprint of its rule when it starts (``sweep.json``, ``rule``:
:func:`transformer_lab.sweep.hypotheses.rule_hash`); the report computes the same
fingerprint from each job's own config (``.hydra/config.yaml``) and the sweep's design
(``sequential.json``) and, where one differs, judges every verdict as exploratory and
says which jobs differ.
"""

from dataclasses import asdict

from omegaconf import OmegaConf

from transformer_lab.report.sweep import Sweep
from transformer_lab.runs.outcome import OutcomeRule
from transformer_lab.runs.sweep_record import SweepRecord
from transformer_lab.sweep.hypotheses import parse_hypotheses, rule_hash
from transformer_lab.sweep.sequential import SequentialDesign


def job_rules(sweep: Sweep, design: SequentialDesign | None) -> dict[str, str]:
    """Each job's rule fingerprint, from its ``.hydra/config.yaml``."""
    recorded_design = None if design is None else asdict(design)
    rules = {}
    for run in sweep.runs:
        config = run.settings("hypotheses", "outcome", given=True)
        hypotheses = parse_hypotheses(OmegaConf.select(config, "hypotheses", default=None))
        rules[run.name] = rule_hash(hypotheses, OutcomeRule.of_config(config), recorded_design)
    return rules


def changed_rule(sweep: Sweep, design: SequentialDesign | None) -> tuple[str | None, str | None]:
    """``(changed, unchecked)``: how the jobs' rule differs from the one the sweep started
    with, or why that cannot be checked (a sweep from before the record); None each where
    there is nothing to say."""
    try:
        record = SweepRecord.read(sweep.path)
    except (ValueError, KeyError, TypeError) as error:  # a damaged sweep.json
        return (
            None,
            f"The sweep's sweep.json is damaged ({type(error).__name__}): its rule unknown.",
        )
    if record is None or record.rule is None:
        return None, (
            "This sweep recorded no rule when it started (sweep.json without `rule`: an "
            "older sweep, or one started without the lab's callbacks), so that the rule "
            "predates the runs cannot be checked."
        )
    differing = sorted(
        name for name, rule in job_rules(sweep, design).items() if rule != record.rule
    )
    if not differing:
        return None, None
    shown = ", ".join(f"`{name}`" for name in differing[:3])
    more = f" and {len(differing) - 3} more" if len(differing) > 3 else ""
    return (
        f"The hypotheses, outcome rule or sequential design of {len(differing)} of the "
        f"{len(sweep.runs)} jobs ({shown}{more}) differ from those the sweep started with "
        f"(sweep.json's rule {record.rule}): a rule stated after the runs tests nothing, so "
        "every verdict below is exploratory, a lead for a sweep of its own."
    ), None
