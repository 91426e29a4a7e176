"""A sequential sweep or an outcome rule that cannot work gets one line before any folder:
a budget below the first stage, no hypotheses to decide, seeds given on the command line,
an outcome threshold outside [0, 1] or an outcome metric the run does not report. A good
one composes its first stage's jobs, which the start's check sees."""

from transformer_lab.config.jobs import job_overrides

from .conftest import refusal

SEQUENTIAL = ["experiment=smoke", "hydra/sweeper=sequential", "model/norm=pre,post"]
HYPOTHESIS = (
    "+hypotheses=[{id: h, claim: c, source: s, metric: outcome/learned, key: model.norm, "
    "values: [pre, post], predicted: A better}]"
)


def test_a_budget_below_the_first_stage_is_refused(sweep_config, capsys):
    config = sweep_config([*SEQUENTIAL, HYPOTHESIS, "hydra.sweeper.budget=2"])
    assert refusal(capsys, config) == (
        "error: hydra.sweeper.budget=2: below the first stage; allowed: an integer >= "
        "hydra.sweeper.first=4"
    )


def test_a_sequential_sweep_without_hypotheses_is_refused(sweep_config, capsys):
    assert refusal(capsys, sweep_config(SEQUENTIAL)) == (
        "error: hydra.sweeper='sequential': a sequential sweep adds seeds until its "
        "hypotheses are decided; none stated; allowed: an experiment with hypotheses, or "
        "hydra/sweeper=basic"
    )


def test_seeds_typed_for_a_sequential_sweep_are_refused(sweep_config, capsys):
    config = sweep_config([*SEQUENTIAL, HYPOTHESIS, "seed=0,1"])
    assert refusal(capsys, config) == (
        "error: seed='given': the sequential sweeper chooses the seeds; allowed: no seed "
        "override; hydra.sweeper.first_seed=<n> to start elsewhere"
    )


def test_a_sequential_sweep_starts_with_its_first_stage_of_seeds(sweep_config):
    config = sweep_config([*SEQUENTIAL, HYPOTHESIS, "hydra.sweeper.first_seed=10"])
    jobs = job_overrides(config)
    assert len(jobs) == 2 * 4
    seeds = sorted({item for job in jobs for item in job if item.startswith("seed=")})
    assert seeds == ["seed=10", "seed=11", "seed=12", "seed=13"]


def test_an_outcome_threshold_outside_0_and_1_is_refused(sweep_config, capsys):
    config = sweep_config(["experiment=smoke", "model/norm=pre,post", "outcome.threshold=1.5"])
    assert refusal(capsys, config) == (  # the sweep's rule, checked once at its start
        "error: outcome.threshold=1.5: out of range; allowed: a number in [0, 1]"
    )


def test_an_outcome_metric_the_run_does_not_report_is_refused(sweep_config, capsys):
    config = sweep_config(
        ["experiment=smoke", "model/norm=pre,post", "outcome.metric=test_long/seq_acc"]
    )
    line = refusal(capsys, config)
    assert line.startswith(
        "error: outcome.metric='test_long/seq_acc': the run does not report it; allowed: "
        "test/oracle_seq_acc, test/oracle_token_acc, test/seq_acc"
    )
    assert line.endswith("(sweep job: model/norm=pre)")
