"""experiment=multi30k_warmup puts the warmup experiment's claims to real translation, stated
before its runs: Xiong et al.'s own two learning rates, the paper's base depth, each claim
judged at each rate as a family, and rules whose metrics a Multi30k job reports."""

import pytest

from transformer_lab.runs.reader import overrides_of
from transformer_lab.sweep.hypotheses import (
    check_reported,
    expand_across,
    parse_hypotheses,
    reported_by,
)

from .experiment_grid import composed, grid


@pytest.fixture(scope="module")
def experiment():
    return composed("multi30k_warmup")


def cells(cfg) -> list[dict[str, str]]:
    return [overrides_of(job) for job in grid(cfg)]


def test_it_is_xiongs_setting_on_multi30k_at_the_papers_base_depth(experiment):
    assert experiment.data._target_.endswith("Multi30kDataModule")
    assert (experiment.data.src_lang, experiment.data.tgt_lang) == ("de", "en")
    assert experiment.model.num_encoder_layers == experiment.model.num_decoder_layers == 6
    assert list(experiment.optim.betas) == [0.9, 0.98]  # Xiong et al. §3.2's Adam
    rates = sorted(float(v) for v in experiment.hydra.sweeper.params["optim.lr"].split(","))
    assert rates == [5e-4, 1e-3]  # Xiong et al.'s lr_max, Figure 2
    assert experiment.optim.schedule == "linear_warmup", "step 800 is where a shorter run ends"
    assert experiment.trainer.gradient_clip_val is None
    assert experiment.hydra.sweeper.first_seed == 3000  # no seed judged or piloted before


def test_each_claim_is_judged_at_each_rate_and_at_both_budgets(experiment):
    rules = expand_across(parse_hypotheses(experiment.hypotheses), cells(experiment))
    families = {}
    for rule in rules:
        families.setdefault(rule.family, []).append(rule)
    assert sorted(families) == [
        "post_needs_warmup",
        "pre_without_warmup_comparable",
        "pre_without_warmup_faster",
    ]
    for family in families.values():
        assert sorted(dict(r.fixed)["optim.lr"] for r in family) == ["0.0005", "0.001"]
    assert list(experiment.outcome.at_steps) == [800] and experiment.trainer.max_steps == 1600
    check_reported(
        rules, reported_by(composed("multi30k_warmup", "recipe=pre_no_warmup")), "job of the sweep"
    )
