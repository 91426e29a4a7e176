"""experiment=multi30k_warmup_bleu: post-norm's warmup on Multi30k judged by BLEU, a rule
stated after multi30k_warmup's first look and so judged only on seeds that no run used."""

import pytest

from transformer_lab.runs.reader import overrides_of
from transformer_lab.sweep.hypotheses import (
    check_reported,
    expand_across,
    parse_hypotheses,
    reported_by,
)
from transformer_lab.sweep.sequential import SequentialDesign

from .experiment_grid import composed, grid


@pytest.fixture(scope="module")
def experiment():
    return composed("multi30k_warmup_bleu")


def seeds(cfg) -> set[int]:
    return set(SequentialDesign.of_sweeper(cfg.hydra.sweeper).seeds)


def test_its_seeds_are_none_that_multi30k_warmup_ran_or_will_run(experiment):
    assert seeds(experiment).isdisjoint(seeds(composed("multi30k_warmup")))
    assert min(seeds(experiment)) == 3100 and len(seeds(experiment)) == 16


def test_it_is_multi30k_warmups_setting_with_post_norms_two_recipes(experiment):
    first = composed("multi30k_warmup")
    for key in ("model", "optim", "data", "trainer", "outcome"):
        assert experiment[key] == first[key], key
    jobs = [overrides_of(job) for job in grid(experiment)]
    assert sorted({job["recipe"] for job in jobs}) == ["post_no_warmup", "post_warmup_400"]
    assert sorted({job["optim.lr"] for job in jobs}) == ["0.0005", "0.001"]


def test_its_one_rule_is_on_bleu_at_each_rate_and_a_job_reports_it(experiment):
    cells = [overrides_of(job) for job in grid(experiment)]
    rules = expand_across(parse_hypotheses(experiment.hypotheses), cells)
    assert [(r.metric, r.values, dict(r.fixed)["optim.lr"]) for r in rules] == [
        ("val/bleu", ("post_warmup_400", "post_no_warmup"), "0.0005"),
        ("val/bleu", ("post_warmup_400", "post_no_warmup"), "0.001"),
    ]
    job = composed("multi30k_warmup_bleu", "recipe=post_warmup_400")
    check_reported(rules, reported_by(job), "job of the sweep")
