"""The sweep's side of the configuration check (sweep/checks.py): a Hydra callback that
refuses a run, or every job of a sweep, with one line before Hydra makes any folder; the jobs
it expands are the configs the launcher composes."""

import copy
import itertools
from pathlib import Path

import pytest
from hydra import initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.types import RunMode
from omegaconf import OmegaConf, open_dict

from transformer_lab.config.jobs import job_configs, split_config
from transformer_lab.console import SCHEMA_NOTICE
from transformer_lab.job import checks
from transformer_lab.sweep.checks import ConfigCheck

pytestmark = pytest.mark.filterwarnings(f"ignore:{SCHEMA_NOTICE}")

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"


@pytest.fixture
def loader():
    """Hydra's config loader, as ``hydra.main`` sets it up, for the callback's expansion."""
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        yield GlobalHydra.instance().config_loader()


def composed(loader, overrides, multirun=False):
    """The config Hydra hands the callbacks: ``hydra`` node included, nothing resolved."""
    mode = RunMode.MULTIRUN if multirun else RunMode.RUN
    extra = ["hydra.mode=MULTIRUN"] if multirun else []
    config = loader.load_configuration("train", [*overrides, *extra], run_mode=mode)
    if not multirun:
        with open_dict(config):
            config.hydra.mode = RunMode.RUN  # as Hydra.run sets it
    return config


def refusal(capsys, hook, config) -> str:
    with pytest.raises(SystemExit) as stop:
        getattr(ConfigCheck(), hook)(config)
    assert stop.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    return line


def test_a_run_is_refused_before_its_folder_with_one_line(loader, capsys, tmp_path):
    bad = ["experiment=smoke", "optim.lr=abc", f"paths.outputs_root={tmp_path}"]
    config = composed(loader, bad)
    line = refusal(capsys, "on_run_start", config)
    assert line == "error: optim.lr='abc': not a number; allowed: a number > 0"
    assert OmegaConf.is_missing(config.hydra.runtime, "output_dir")  # before run_job set it
    assert list(tmp_path.iterdir()) == []
    ConfigCheck().on_run_start(composed(loader, ["experiment=smoke"]))  # a good one passes


def test_every_job_of_a_sweep_is_checked_and_the_bad_one_named(loader, capsys):
    sweep = ["experiment=smoke", "model/norm=pre,post", "optim.lr=1e-3,abc"]
    config = composed(loader, sweep, multirun=True)
    line = refusal(capsys, "on_multirun_start", config)
    assert line == (
        "error: optim.lr='abc': not a number; allowed: a number > 0 "
        "(sweep job: model/norm=pre,optim.lr=abc)"
    )


def test_a_local_sweep_of_ddp_jobs_is_refused_up_front(loader, capsys):
    config = composed(loader, ["trainer=ddp", "trainer.accelerator=cpu", "seed=0,1"], True)
    line = refusal(capsys, "on_multirun_start", config)
    assert "trainer.strategy='ddp': with trainer.devices=2 in a local multirun" in line


def test_an_optimizing_sweep_checks_its_own_config_and_direction(loader, capsys, tmp_path):
    def study(*overrides):
        optuna = ["hparams_search=optuna", "experiment=smoke", f"paths.outputs_root={tmp_path}"]
        return composed(loader, [*optuna, *overrides], True)

    line = refusal(capsys, "on_multirun_start", study("optimized_metric=val/loss"))
    assert line == (
        "error: optimized_metric=val/loss is to minimize, but hydra.sweeper.direction=maximize; "
        "allowed: hydra.sweeper.direction=minimize"
    )
    line = refusal(capsys, "on_multirun_start", study("model.dropout=2"))
    assert line == "error: model.dropout=2: out of range; allowed: a number in [0, 1)"
    # the values it draws are its own: a trial that draws a bad one fails alone, later
    ConfigCheck().on_multirun_start(study("optim.warmup_steps=choice(-1,0)"))
    assert list(tmp_path.iterdir()) == []  # a new study: the check makes nothing


@pytest.mark.slow
def test_the_expanded_jobs_are_the_configs_the_launcher_composes(loader):
    """Hydra composes the first job of each combination of groups and shared values, its
    siblings differing in swept values only: the same configs, in the same order, as
    ``load_sweep_config`` composes for each job; a swept value beside an override of the
    node around it (``++model={...}``) is left to Hydra's order."""
    values = ["optim.lr=1e-3", "~callbacks.samples", "+trainer.benchmark=true"]
    swept = ["seed=0,1", "model.dropout=0.0,0.2", "++model={dropout: 0.5},{dropout: 0.1}"]
    sweep = ["experiment=smoke", "model/norm=pre,post", "data=copy,sort", *swept, *values]
    config = composed(loader, sweep, multirun=True)
    jobs = [(name, copy.deepcopy(task), hydra) for name, task, hydra in job_configs(config)]
    models = ["{dropout:0.5}", "{dropout:0.1}"]  # as Hydra writes them back
    axes = [["pre", "post"], ["copy", "sort"], ["0", "1"], ["0.0", "0.2"], models]
    expected = list(itertools.product(*axes))
    assert len(jobs) == len(expected) == 32
    for (name, task, hydra_cfg), (norm, data, seed, dropout, model) in zip(
        jobs, expected, strict=True
    ):
        job = [f"model/norm={norm}", f"data={data}", f"seed={seed}"]
        job += [f"model.dropout={dropout}", f"++model={model}"]
        assert name == ",".join(job)
        launched, launched_hydra = split_config(
            loader.load_sweep_config(config, ["experiment=smoke", *job, *values])
        )
        assert OmegaConf.to_container(task) == OmegaConf.to_container(launched), name
        assert hydra_cfg.mode == launched_hydra.mode == RunMode.MULTIRUN
        assert "samples" not in task.callbacks and task.trainer.benchmark is True
        assert task.seed == int(seed) and task.model.dropout == float(model[-4:-1])


def values_bad_at(bad, position=57, jobs=100) -> str:
    """``jobs`` comma-separated values, good but at ``position``."""
    return ",".join(bad if job == position else str(job) for job in range(jobs))


@pytest.mark.slow  # the checks of 100-job sweeps
@pytest.mark.parametrize(
    ("key", "message"),
    [  # the model's own seed is part of its settings; the run's seed is checked per job
        ("model.init_seed", "model.init_seed=-1: out of range; allowed: an integer in [0, "),
        ("seed", "seed=-1: out of range; allowed: an integer in [0, 4294967295]"),
    ],
)
def test_a_model_built_once_for_many_jobs_hides_no_bad_value(loader, capsys, key, message):
    """The jobs of a seed sweep share one model build: job 57's bad seed is refused all the
    same, named."""
    config = composed(loader, ["experiment=smoke", f"{key}={values_bad_at('-1')}"], True)
    line = refusal(capsys, "on_multirun_start", config)
    assert line.startswith(f"error: {message}")
    assert line.endswith(f" (sweep job: {key}=-1)")


def test_a_model_that_differs_in_a_later_job_is_built_and_refused(loader, capsys):
    sweep = ["experiment=smoke", "model.num_heads=4,3", "seed=range(50)"]  # 3 heads: d_model 32
    line = refusal(capsys, "on_multirun_start", composed(loader, sweep, multirun=True))
    assert line.startswith("error: model.")
    assert line.endswith("(sweep job: model.num_heads=3,seed=0)")  # job 50, the first of them


@pytest.mark.slow  # the checks of 100-job sweeps
def test_a_sweep_builds_one_model_per_distinct_model_setting(loader, monkeypatch):
    """100 seeds build one model; a grid over norm and encoding one per combination."""
    built = []
    build_module = checks.build_module

    def counted(*arguments):
        built.append(arguments)
        return build_module(*arguments)

    monkeypatch.setattr(checks, "build_module", counted)
    ConfigCheck().on_multirun_start(composed(loader, ["experiment=smoke", "seed=range(100)"], True))
    assert len(built) == 1
    built.clear()
    grid = ["model/norm=pre,post", "model/pos_encoding=sinusoidal,rotary", "seed=range(25)"]
    ConfigCheck().on_multirun_start(composed(loader, ["experiment=smoke", *grid], True))
    assert len(built) == 4


def test_settings_that_cancel_each_other_are_one_warning_line_and_the_run_goes_on(
    loader, capsys, tmp_path
):
    overrides = ["experiment=smoke", "optim.warmup_steps=400", f"paths.outputs_root={tmp_path}"]
    ConfigCheck().on_run_start(composed(loader, overrides))
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("warning: optim.warmup_steps=400 >= trainer.max_steps=20: ")
    assert line.endswith("set optim.warmup_steps below 20")
    ConfigCheck().on_run_start(composed(loader, [*overrides, "optim.warmup_steps=5"]))
    assert capsys.readouterr().err == ""


def test_a_sweep_names_each_cancelling_setting_once_with_the_jobs_it_concerns(loader, capsys):
    sweep = ["experiment=smoke", "optim.warmup_steps=5,400", "seed=0,1"]
    ConfigCheck().on_multirun_start(composed(loader, sweep, multirun=True))
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("warning: optim.warmup_steps=400 >= trainer.max_steps=20: ")
    assert line.endswith("set optim.warmup_steps below 20 (2 of 4 jobs)")
