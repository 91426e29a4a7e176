"""What an experiment predicts, written before it runs: its ``hypotheses``, and their check
against the sweep that is to test them.

An experiment config (``# @package _global_``) lists them at the top level (none by
default, ``conf/train.yaml``), each a claim with its source and a rule the report can
evaluate (:mod:`transformer_lab.report.verdicts`)::

    hypotheses:
      - id: deep_post_needs_warmup
        claim: "Deep post-norm trains worse without warmup than with it."   # one sentence
        source: "Xiong et al. 2020, §3.2"
        metric: val/seq_acc_auc      # training/metric_names.py: which way is better; or
                                     # outcome/learned: the rates of runs that learned
        diverged_value: 0.0          # optional: what a diverged run scores on the metric
        key: optim.schedule          # the swept key compared, spelled as the report spells it
        values: [linear_warmup, constant]   # A and B
        fixed: {model.norm: post, depth: 6}  # other keys held at one value (may be empty)
        predicted: A better          # or "B better", or "equivalent" with a margin:
        margin: 0.05                 # |A - B| within it, on the metric's scale
        across: [depth, optim.lr]    # optional: judged once in every cell of these keys
        family: warmup_claims        # optional: the rules adjusted together (default: all)

A rule ``across`` keys is a claim about a region of the grid, not one point: it is judged
in every combination of those keys' values that the sweep runs with both A and B (its id
then ``post_needs_warmup[depth=6,optim.lr=0.001]``, the cell's values held fixed), each
cell a rule of the sweep's family, and the report draws the map of where it holds.

The sweep's rules are one family, Holm's method over both directions of all of them, so the
chance of any false verdict among them stays at 5%; a grid of many cells may instead name a
``family`` per claim (one research question: "where does post-norm need warmup?"), each
family then keeping its own 5%. The lab-wide family (:mod:`transformer_lab.report.lab`)
adjusts every family of every bundled sweep together.

A rule that predicts ``equivalent`` claims that A and B differ by less than ``margin``
(Xiong et al.'s "comparable results"): it is judged by two one-sided tests (TOST), never by
a difference "not detected", which is no evidence of equality. Its margin is part of the
claim, stated before the runs; on ``outcome/learned`` no exact test of a margin exists
here, so equivalence takes a continuous metric.

A diverged run has no final value of a continuous metric: unless the rule says what it
scores (``diverged_value``, e.g. the metric's worst), a comparison with diverged runs is
``inconclusive`` rather than judged on the runs that survived. On ``outcome/learned`` a
diverged run is a run that did not learn (:mod:`transformer_lab.runs.outcome`).

The keys the rule leaves out of ``fixed`` are not averaged over blindly: the report pairs
each run of A with the run of B that agrees with it on them and on the seed.

A rule the sweep cannot evaluate is refused with one line naming its field: a field
missing or unknown, a metric that is none or that no job reports, a key the sweep does
not vary, a value it does not run, a direction other than the two. The sweep's
:class:`~transformer_lab.sweep.checks.ConfigCheck` checks this before any job folder
exists, and the report again on a folder made before (or by hand).
"""

import dataclasses
import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass

from omegaconf import DictConfig, ListConfig, OmegaConf

from transformer_lab.config.validation import InvalidSetting, check_number
from transformer_lab.runs.hparams import override_key
from transformer_lab.runs.order import natural_key
from transformer_lab.runs.outcome import LEARNED, OutcomeRule, is_learned, learned_metric
from transformer_lab.training.metric_names import (
    CURVE_METRICS,
    FRACTION_METRICS,
    METRIC_CHOICES,
    ORACLE_METRICS,
    STABILITY_METRICS,
    STAGE_METRICS,
    TEST_STAGES,
    TEXT_METRICS,
    is_metric,
)

EQUIVALENT = "equivalent"
DIRECTIONS = ("A better", "B better")
PREDICTIONS = (*DIRECTIONS, EQUIVALENT)
FIELDS = (
    "id",
    "claim",
    "source",
    "metric",
    "key",
    "values",
    "fixed",
    "predicted",
    "margin",
    "diverged_value",
    "across",
    "family",
)
OPTIONAL = ("fixed", "margin", "diverged_value", "across", "family")
ID_PATTERN = re.compile(r"[A-Za-z0-9_.-]+")


def as_text(value) -> str:
    """A config value as an override spells it: ``true``, ``null``, ``6``, ``post``."""
    if isinstance(value, bool):
        return str(value).lower()
    return "null" if value is None else str(value)


def same_value(given: str, run: str | None) -> bool:
    """Whether a hypothesis's value is a job's override value: the same text, or the same
    number (``1.9e-3`` in a sweep's override, ``0.0019`` as YAML reads it)."""
    if run is None:
        return False
    if given == run:
        return True
    try:
        return float(given) == float(run)
    except ValueError:
        return False


@dataclass(frozen=True)
class Hypothesis:
    id: str
    claim: str
    source: str
    metric: str
    key: str
    values: tuple[str, str]  # A, B
    fixed: tuple[tuple[str, str], ...]  # ((key, value), ...)
    predicted: str  # one of PREDICTIONS
    diverged_value: float | None = None  # what a diverged run scores; None: inconclusive
    margin: float | None = None  # |A - B| an ``equivalent`` rule allows, on the metric's scale
    across: tuple[str, ...] = ()  # judged in every cell of these keys (expand_across)
    family: str | None = None  # the rules adjusted together; None: the sweep's one family
    base: str | None = None  # a cell's rule: the id of the rule it was expanded from
    cell: tuple[tuple[str, str], ...] = ()  # a cell's rule: its values of the across keys

    def field(self, name: str) -> str:
        """The setting ``name`` of this hypothesis, as an error names it."""
        return f"hypotheses.{self.id}.{name}"

    def runs(self, overrides: dict[str, str], value: str) -> bool:
        """Whether a job of these ``overrides`` runs ``key=value`` with the fixed keys."""
        settings = [(self.key, value), *self.fixed]
        return all(same_value(v, overrides.get(k)) for k, v in settings)


def _text_field(where: str, name: str, value) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidSetting(f"{where}.{name}", value, "not a text", "a non-empty string")
    return value


def _scalar(key: str, value) -> str:
    if not isinstance(value, str | int | float | bool) and value is not None:
        raise InvalidSetting(key, value, "not a single value", "a value an override can set")
    return as_text(value)


def _parse_one(index: int, item) -> Hypothesis:
    where = f"hypotheses[{index}]"
    if not isinstance(item, dict):
        raise InvalidSetting(where, item, "not a mapping", f"a mapping of {', '.join(FIELDS)}")
    for name in item:
        if name not in FIELDS:
            raise InvalidSetting(f"{where}.{name}", item[name], "unknown field", ", ".join(FIELDS))
    for name in FIELDS:
        if name not in item and name not in OPTIONAL:
            raise InvalidSetting(f"{where}.{name}", None, "missing", ", ".join(FIELDS))
    identity = item["id"]
    if not isinstance(identity, str) or not ID_PATTERN.fullmatch(identity):
        raise InvalidSetting(f"{where}.id", identity, "not a name", "letters, digits, _ . -")
    where = f"hypotheses.{identity}"
    claim = _text_field(where, "claim", item["claim"])
    source = _text_field(where, "source", item["source"])
    metric = item["metric"]
    if not isinstance(metric, str) or not (is_metric(metric) or is_learned(metric)):
        allowed = f"{LEARNED}, {LEARNED}@<step> (outcome.at_steps), {METRIC_CHOICES}"
        raise InvalidSetting(f"{where}.metric", metric, "not a metric a run reports", allowed)
    key = override_key(_text_field(where, "key", item["key"]))
    values = item["values"]
    if not isinstance(values, list) or len(values) != 2:
        raise InvalidSetting(f"{where}.values", values, "not two values", f"[A, B] of {key}")
    a, b = (_scalar(f"{where}.values", v) for v in values)
    if a == b:
        raise InvalidSetting(f"{where}.values", values, "the same value twice", "A and B differ")
    fixed = item.get("fixed") or {}
    if not isinstance(fixed, dict):
        raise InvalidSetting(f"{where}.fixed", fixed, "not a mapping", "{key: value, ...}")
    held = tuple((override_key(str(k)), _scalar(f"{where}.fixed.{k}", v)) for k, v in fixed.items())
    if any(k == key for k, _ in held):
        raise InvalidSetting(f"{where}.fixed.{key}", fixed, "the key compared", "other keys")
    predicted = item["predicted"]
    if predicted not in PREDICTIONS:
        allowed = f"{', '.join(PREDICTIONS[:-1])} or {PREDICTIONS[-1]}"
        raise InvalidSetting(f"{where}.predicted", predicted, "unknown", allowed)
    margin = _margin(where, metric, predicted, item.get("margin"))
    diverged_value = item.get("diverged_value")
    if diverged_value is not None:
        if is_learned(metric):
            reason = "an outcome counts a diverged run as not learned"
            raise InvalidSetting(f"{where}.diverged_value", diverged_value, reason, "null")
        check_number(f"{where}.diverged_value", diverged_value)
    across = item.get("across") or []
    if not isinstance(across, list) or not all(isinstance(k, str) and k for k in across):
        raise InvalidSetting(f"{where}.across", across, "not a list of keys", "[key, ...]")
    across = tuple(override_key(k) for k in across)
    clash = [k for k in across if k == key or k in dict(held)]
    if clash:
        reason = "compared or held fixed already"
        raise InvalidSetting(f"{where}.across", clash[0], reason, "other keys the sweep varies")
    family = item.get("family")
    if family is not None and not (isinstance(family, str) and ID_PATTERN.fullmatch(family)):
        raise InvalidSetting(f"{where}.family", family, "not a name", "letters, digits, _ . -")
    return Hypothesis(
        identity,
        claim,
        source,
        metric,
        key,
        (a, b),
        held,
        predicted,
        diverged_value,
        margin,
        across,
        family,
    )


def _margin(where: str, metric: str, predicted: str, margin) -> float | None:
    """The margin of an ``equivalent`` rule, which it needs (a number above 0); none for
    a direction."""
    if predicted != EQUIVALENT:
        if margin is not None:
            reason = f"a margin belongs to predicted: {EQUIVALENT}"
            raise InvalidSetting(f"{where}.margin", margin, reason, "null")
        return None
    if is_learned(metric):
        reason = "no exact test of a margin on counts of runs"
        allowed = "a continuous metric (val/seq_acc, val/seq_acc_auc, val/loss, ...)"
        raise InvalidSetting(f"{where}.predicted", predicted, reason, allowed)
    if margin is None:
        reason = "an equivalence needs its margin"
        raise InvalidSetting(f"{where}.margin", margin, reason, "a number > 0")
    check_number(f"{where}.margin", margin, above=0)
    return float(margin)


def parse_hypotheses(items) -> list[Hypothesis]:
    """The ``hypotheses`` of a config (a list, or None for none), each checked on its own."""
    if isinstance(items, DictConfig | ListConfig):
        items = OmegaConf.to_container(items, resolve=True)
    if items is None:
        return []
    if not isinstance(items, list):
        raise InvalidSetting("hypotheses", items, "not a list", f"a list of {', '.join(FIELDS)}")
    parsed = [_parse_one(i, item) for i, item in enumerate(items)]
    merged(parsed)  # an id twice
    return parsed


def merged(hypotheses: Iterable[Hypothesis]) -> list[Hypothesis]:
    """The hypotheses of a sweep's jobs, each once; an id stated with two rules is refused."""
    by_id: dict[str, Hypothesis] = {}
    for hypothesis in hypotheses:
        known = by_id.setdefault(hypothesis.id, hypothesis)
        if known != hypothesis:
            raise InvalidSetting(
                f"hypotheses.{hypothesis.id}", hypothesis.claim, "stated twice", "one rule per id"
            )
    return list(by_id.values())


def expand_across(hypotheses: list[Hypothesis], jobs: list[dict[str, str]]) -> list[Hypothesis]:
    """Each rule ``across`` keys as one rule per cell that the ``jobs`` (their overrides)
    run with both its values and its fixed keys, in the jobs' order of cells; the others as
    they are. A key the jobs do not vary is refused, naming the rule."""
    expanded = []
    for h in hypotheses:
        if not h.across:
            expanded.append(h)
            continue
        varying = varying_keys(jobs)
        for key in h.across:
            if key not in varying:
                allowed = ", ".join(varying) or "none"
                raise InvalidSetting(h.field("across"), key, "the sweep does not vary it", allowed)
        cells: list[tuple[tuple[str, str], ...]] = []
        for job in jobs:
            cell = tuple((k, job.get(k)) for k in h.across)
            if any(v is None for _, v in cell) or cell in cells:
                continue
            runs_both = all(
                any(dataclasses.replace(h, fixed=h.fixed + cell).runs(j, v) for j in jobs)
                for v in h.values
            )
            if runs_both:
                cells.append(cell)
        for cell in sorted(cells, key=lambda c: [natural_key(v) for _, v in c]):
            where = ",".join(f"{k}={v}" for k, v in cell)
            expanded.append(
                dataclasses.replace(
                    h, id=f"{h.id}[{where}]", fixed=h.fixed + cell, across=(), base=h.id, cell=cell
                )
            )
    return expanded


def varying_keys(jobs: list[dict[str, str]]) -> list[str]:
    """The override keys whose value differs between the ``jobs`` (a key some job does not
    set differs too), in name order."""
    keys = sorted({key for job in jobs for key in job})
    return [k for k in keys if len({job.get(k) for job in jobs}) > 1]


def check_against_sweep(
    hypotheses: list[Hypothesis],
    jobs: list[dict[str, str]],
    replicate_key: str = "seed",
    instead: str | None = None,
) -> None:
    """InvalidSetting unless every rule compares two values that the ``jobs`` (their
    overrides by key) run, of a key they vary, with the fixed keys at values they run.
    ``instead``: what else to allow in place of a key the sweep does not vary."""
    varying = [k for k in varying_keys(jobs) if k != replicate_key]
    values: dict[str, list[str]] = {}
    for job in jobs:
        for key, value in job.items():
            values.setdefault(key, [])
            if value not in values[key]:
                values[key].append(value)
    for h in hypotheses:
        if h.key not in varying:
            allowed = ", ".join([*varying, *([instead] if instead else [])]) or "none"
            raise InvalidSetting(h.field("key"), h.key, "the sweep does not vary it", allowed)
        for key, value, name in [(h.key, v, "values") for v in h.values] + [
            (k, v, f"fixed.{k}") for k, v in h.fixed
        ]:
            if key not in values:
                set_keys = ", ".join(k for k in sorted(values) if k != h.key)
                raise InvalidSetting(h.field(name), value, "no job sets the key", set_keys)
            if not any(same_value(value, run) for run in values[key]):
                reason = f"the sweep does not run {key}={value}"
                run = ", ".join(sorted(values[key], key=natural_key))
                raise InvalidSetting(h.field(name), value, reason, run)
        for value in h.values:
            if not any(h.runs(job, value) for job in jobs):
                held = ", ".join(f"{k}={v}" for k, v in h.fixed)
                reason = f"no job runs {h.key}={value} with {held}"
                raise InvalidSetting(h.field("fixed"), dict(h.fixed), reason, "values run together")


def check_reported(hypotheses: list[Hypothesis], reported: set[str], by: str) -> None:
    """InvalidSetting for a rule whose metric is not among those ``reported`` by ``by``
    (``"job of the sweep"``, ``"finished run"``)."""
    for h in hypotheses:
        if h.metric not in reported:
            allowed = ", ".join(sorted(m for m in reported if is_metric(m))) or "none"
            raise InvalidSetting(h.field("metric"), h.metric, f"no {by} reports it", allowed)


def reported_by(cfg: DictConfig) -> set[str]:
    """The metrics a job of config ``cfg`` reports once it trains: those of val and test,
    test_long's with that split (the test stages' at the oracle length too), BLEU and chrF
    for data read by a tokenizer, what the val/seq_acc curve says, and the training's
    stability with its callback on."""
    stages = ["val", "test"]
    if OmegaConf.select(cfg, "data.test_long_size", default=0):
        stages.append("test_long")
    metrics = list(STAGE_METRICS)
    if OmegaConf.select(cfg, "data.tokenizer", default=None) is not None:
        metrics += TEXT_METRICS
    names = {f"{stage}/{metric}" for stage in stages for metric in metrics}
    names |= {f"{s}/{m}" for s in stages if s in TEST_STAGES for m in ORACLE_METRICS}
    names |= {*CURVE_METRICS, LEARNED}
    names |= {learned_metric(step) for step in OutcomeRule.of_config(cfg).at_steps}
    if OmegaConf.select(cfg, "callbacks.training_stability", default=None) is not None:
        names |= set(STABILITY_METRICS)
    return names


def check_sweep_start(
    hypotheses: list[Hypothesis], reported: set[str], jobs: list[dict[str, str]] | None
) -> None:
    """The ``hypotheses`` of a sweep's jobs (each job's :func:`parse_hypotheses`), before any
    job starts: their format always; with the ``jobs``' overrides (the basic sweeper's,
    known ahead), against the sweep and the metrics its jobs report (``reported``, each
    job's :func:`reported_by`). Another sweeper draws its jobs as it goes (``jobs`` None):
    the report checks those against the jobs that ran."""
    hypotheses = merged(hypotheses)
    if jobs is None or not hypotheses:
        return
    hypotheses = expand_across(hypotheses, jobs)
    # a sweep narrowed on the command line (depth=6) need not compare what its experiment does
    check_against_sweep(hypotheses, jobs, instead="or hypotheses=[] to judge none")
    check_reported(hypotheses, reported, "job of the sweep")


def check_outcome(cfg: DictConfig) -> None:
    """InvalidSetting unless the run's outcome rule names an accuracy the run reports
    (``test_long/seq_acc`` needs that split)."""
    rule = OutcomeRule.of_config(cfg)
    reported = reported_by(cfg)
    if rule.metric not in reported:
        allowed = ", ".join(sorted(m for m in reported if m in FRACTION_METRICS))
        raise InvalidSetting("outcome.metric", rule.metric, "the run does not report it", allowed)
    max_steps = OmegaConf.select(cfg, "trainer.max_steps", default=None)
    interval = OmegaConf.select(cfg, "trainer.val_check_interval", default=None)
    for step in rule.at_steps:
        validated = isinstance(interval, int) and (step % interval == 0 or step == max_steps)
        if not isinstance(max_steps, int) or step > max_steps or not validated:
            allowed = (
                f"a step <= trainer.max_steps={max_steps} that the run validates at "
                f"(a multiple of trainer.val_check_interval={interval})"
            )
            raise InvalidSetting("outcome.at_steps", step, "no validation there", allowed)


def rule_hash(
    hypotheses: Iterable[Hypothesis], outcome: OutcomeRule, design: dict | None = None
) -> str:
    """A fingerprint of the rule a sweep is judged by: its hypotheses (in id order, as
    parsed, so that ``model/norm`` and ``model.norm`` are one rule), its runs' outcome
    rule and a sequential sweep's ``design`` (looks and level). The sweep records it when it
    starts (``sweep.json``); the report compares it with the rule its jobs ran with."""
    rule = {
        "hypotheses": [asdict(h) for h in sorted(hypotheses, key=lambda h: h.id)],
        "outcome": asdict(outcome),
        "design": design,
    }
    text = json.dumps(rule, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]
