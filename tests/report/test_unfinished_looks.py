"""A sequential sweep is judged only at looks whose stage has run in full: verdicts on part
of a stage (jobs still running, stopped, failed, or kept as they end) would be looks that
the level was not split for (:func:`transformer_lab.report.verdicts.judge_looks`)."""

from pathlib import Path

from transformer_lab.report.sweep import Sweep
from transformer_lab.report.verdicts import judge_looks
from transformer_lab.runs.reader import Run
from transformer_lab.sweep.hypotheses import Hypothesis
from transformer_lab.sweep.sequential import SequentialDesign

DESIGN = SequentialDesign(first=4, budget=8, level=0.05, first_seed=1000)
SEEDS = [str(seed) for seed in DESIGN.seeds]  # 1000..1007: looks after 4 and after 8
WARMUP_HELPS = Hypothesis(
    "warmup_helps", "", "", "outcome/learned", "optim.warmup_steps", ("100", "0"), (), "A better"
)


def run(warmup: str, seed: str, learned: bool) -> Run:
    overrides = {"optim.warmup_steps": warmup, "seed": seed}
    return Run(Path("/made-up"), overrides, {"outcome": "learned" if learned else "stalled"})


def sweep(warm_learned: int, cold_learned: int, seeds: list[str]) -> list[Run]:
    """With warmup the first ``warm_learned`` of ``seeds`` learn, without it the first
    ``cold_learned``."""
    return [run("100", s, i < warm_learned) for i, s in enumerate(seeds)] + [
        run("0", s, i < cold_learned) for i, s in enumerate(seeds)
    ]


def verdict(runs: list[Run]):
    (found,) = judge_looks(Sweep(Path("/made-up"), runs), [WARMUP_HELPS], DESIGN, SEEDS)
    return found


def test_a_complete_first_look_decides():
    found = verdict(sweep(4, 0, SEEDS[:4]))  # Boschloo 4/4 against 0/4: p = 0.0039 < 0.025 / 2
    assert (found.word, found.look) == ("supported", 4)


def test_a_first_look_with_a_job_missing_decides_nothing():
    runs = [
        r
        for r in sweep(4, 0, SEEDS[:4])
        if r.overrides != {"optim.warmup_steps": "0", "seed": "1003"}
    ]
    found = verdict([*runs, run("0", SEEDS[3], False)])  # the same runs, whole: decided
    assert found.decided
    found = verdict(runs)
    assert not found.decided
    assert (
        found.word
        == "inconclusive (look after 4 seeds unfinished: a configuration has 3 of its 4 seeds)"
    )


def test_a_second_stage_run_in_part_leaves_the_verdict_of_the_first_look():
    first = sweep(2, 0, SEEDS[:4])  # 2/4 against 0/4: undecided at the first look
    assert (verdict(first).word, verdict(first).look) == ("inconclusive", 4)
    # the second stage so far: warmup's four seeds all learned, no run without warmup yet
    part = first + [run("100", s, True) for s in SEEDS[4:]]
    found = verdict(part)
    assert (found.word, found.look) == ("inconclusive", 4)
    assert found.comparison.a and len(found.comparison.a) == 4  # judged on the first look's runs
    whole = part + [run("0", s, False) for s in SEEDS[4:]]  # 6/8 against 0/8
    found = verdict(whole)
    assert (found.word, found.look) == ("supported", 8)
