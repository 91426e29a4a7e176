"""The experiments of issue 24 (docs/results.md) can carry their conclusions: each exists,
composes into jobs whose swept keys exist, runs at least 8 seeds at its first look,
states hypotheses from a cited paper that the sweep-start check accepts (the ConfigCheck
callback itself, in-process), and runs without gradient clipping where stability is the
question."""

import copy
from pathlib import Path

import pytest
from hydra import initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.types import RunMode
from omegaconf import OmegaConf

from transformer_lab.config.jobs import job_configs, job_overrides
from transformer_lab.console import SCHEMA_NOTICE
from transformer_lab.sweep import naming, search_space, threads  # noqa: F401 (resolvers)
from transformer_lab.sweep.checks import ConfigCheck
from transformer_lab.sweep.hypotheses import parse_hypotheses

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings(f"ignore:{SCHEMA_NOTICE}"),
]  # composes every job of every bundled experiment: ~25 s

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"
SEEDS = {  # the fewest seeds each experiment may run: what an exact test of its rules needs
    "warmup": 8,
    "depth": 8,
    "liu_control": 8,
    "lr_window": 8,
    "ffn_comparison": 8,
    "pe_extrapolation": 8,
    "norm_pe_grid": 8,
}
STABILITY = ("warmup", "depth", "liu_control", "lr_window")  # clipping would hide divergence


@pytest.fixture(scope="module")
def sweeps():
    """``{experiment: (multirun config, [job config, ...])}``, composed as Hydra does."""
    GlobalHydra.instance().clear()
    composed = {}
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        loader = GlobalHydra.instance().config_loader()
        for experiment in SEEDS:
            overrides = [f"experiment={experiment}", "hydra.mode=MULTIRUN"]
            config = loader.load_configuration("train", overrides, run_mode=RunMode.MULTIRUN)
            ConfigCheck().on_multirun_start(config)  # exits 2 on a hypothesis it refuses
            jobs = [copy.deepcopy(job) for _, job, _ in job_configs(config)]
            composed[experiment] = (config, jobs, job_overrides(config))
    GlobalHydra.instance().clear()
    return composed


def swept(config) -> dict[str, list[str]]:
    """The sweep's keys and values; a sequential sweep's seeds those of its first stage."""
    sweeper = config.hydra.sweeper
    params = {key: str(values).split(",") for key, values in sweeper.params.items()}
    if "first_seed" in sweeper:
        params["seed"] = [str(sweeper.first_seed + i) for i in range(sweeper.first)]
    return params


@pytest.mark.parametrize("experiment", SEEDS)
def test_each_experiment_sweeps_keys_its_jobs_have_with_enough_seeds(sweeps, experiment):
    config, jobs, overrides = sweeps[experiment]
    params = swept(config)
    assert len(params["seed"]) >= SEEDS[experiment]
    assert len(jobs) == len(overrides) > len(params["seed"])  # more than seeds vary
    for key in params:
        if not (CONF_DIR / key).is_dir():  # a value, not a config group (tested elsewhere)
            assert all(OmegaConf.select(job, key) is not None for job in jobs), key
    assert sorted({job.seed for job in jobs}) == sorted(int(s) for s in params["seed"])


@pytest.mark.parametrize("experiment", SEEDS)
def test_each_experiment_states_cited_hypotheses(sweeps, experiment):
    _, jobs, _ = sweeps[experiment]
    hypotheses = parse_hypotheses(jobs[0].hypotheses)
    assert hypotheses
    for h in hypotheses:
        assert any(mark in h.source for mark in ("§", "Figure", "Table")), h.id
        assert any(year in h.source for year in ("2017", "2020", "2021", "2022")), h.id


@pytest.mark.parametrize("experiment", SEEDS)
def test_each_experiment_trains_every_job_its_whole_budget(sweeps, experiment):
    _, jobs, _ = sweeps[experiment]  # the main job's stop at the target would cut curves short
    assert all(job.stop_at_seq_acc is None for job in jobs)


@pytest.mark.parametrize("experiment", STABILITY)
def test_stability_experiments_run_without_gradient_clipping(sweeps, experiment):
    _, jobs, _ = sweeps[experiment]
    assert all(job.trainer.gradient_clip_val is None for job in jobs)


def test_warmup_compares_post_with_and_without_ma_and_yaratss_warmup_and_pre_without(sweeps):
    config, jobs, _ = sweeps["warmup"]
    beta2 = jobs[0].optim.betas[1]
    rule = round(2 / (1 - beta2))  # 100 steps for beta2 = 0.98
    recipes = {(job.model.norm, job.optim.warmup_steps) for job in jobs}
    assert recipes == {("post", rule), ("post", 0), ("pre", 0)}
    # no warmup eats the run: at most an eighth of the steps
    assert rule <= jobs[0].trainer.max_steps / 8
    assert {job.optim.schedule for job in jobs} == {"linear_warmup"}  # no noam decay
    assert {job.model.num_encoder_layers for job in jobs} == {6}
    # seeds until decided, from seeds no pilot used, learned judged by an exact test
    assert config.hydra.sweeper.first_seed >= 6000 and config.hydra.sweeper.budget >= 8
    metrics = {h.id: h.metric for h in parse_hypotheses(jobs[0].hypotheses)}
    assert metrics["post_needs_warmup"] == "outcome/learned"


def test_liu_control_runs_both_hybrids_and_both_uniform_placements(sweeps):
    _, jobs, _ = sweeps["liu_control"]
    cells = {(job.model.encoder.norm, job.model.decoder.norm) for job in jobs}
    assert cells == {("post", "post"), ("post", "pre"), ("pre", "post"), ("pre", "pre")}


def test_pe_extrapolation_scores_words_past_the_training_lengths_at_the_oracle_length(sweeps):
    config, jobs, _ = sweeps["pe_extrapolation"]
    assert sorted(swept(config)["data"]) == ["copy", "reverse"]
    assert all(job.data.test_long_max_task_len > job.data.max_task_len for job in jobs)
    metrics = {h.metric for h in parse_hypotheses(jobs[0].hypotheses)}
    assert metrics == {"test_long/oracle_token_acc"}
