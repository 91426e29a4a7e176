"""The HPARAMS entry's hyper-parameters: the job's overrides first, one spelling per key,
then the curated set; never plumbing."""

import re
import sys
from pathlib import Path

import pytest
from hydra import initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode

from transformer_lab.config.validation import ConfigError
from transformer_lab.job.context import RunContext
from transformer_lab.job.run import train
from transformer_lab.runs.hparams import (
    CURATED,
    differing_keys,
    metric_names,
    override_key,
    run_hparams,
    shown_hparams,
)
from transformer_lab.sweep.record import sweep_record

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"

NORM_COMPARISON = ["experiment=norm_comparison", "trainer.max_steps=100"]
ITS_GRID = {"model.norm", "depth", "optim.schedule", "seed"}  # its hydra.sweeper.params


@pytest.mark.parametrize("typed", ["model/norm", "model.norm", "+model.norm", "~model.norm"])
def test_a_group_slash_and_a_value_dot_are_one_key(typed):
    assert override_key(typed) == "model.norm"


def test_overrides_come_first_with_their_resolved_values_and_plumbing_is_left_out(compose_train):
    overrides = [
        "seed=3",
        "model/norm=pre",
        "data=copy",
        "paths.outputs_root=/tmp/x",
        "callbacks.layer_stats.every_n_steps=3",
        "~callbacks.attention_maps",
    ]
    params, overridden = run_hparams(compose_train(overrides), overrides)
    assert overridden == {"seed", "model.norm", "data"}
    assert list(params)[:3] == ["seed", "model.norm", "data"]
    assert params["seed"] == 3 and params["model.norm"] == "pre"
    assert params["data"] == "copy"  # a whole group: the option as typed
    assert params["data.task"] == "copy"
    assert list(params)[3:] == [k for k in CURATED if k != "model.norm"]
    assert not [k for k in params if k.startswith(("callbacks", "paths"))]


@pytest.mark.parametrize("target", [0, 1.5])
def test_a_target_accuracy_outside_0_to_1_is_a_config_error(compose_train, target):
    message = f"target_seq_acc={target}: out of range; allowed: a number in (0, 1]"
    with pytest.raises(ConfigError, match=re.escape(message)):
        train(compose_train(["experiment=smoke", f"target_seq_acc={target}"]))


def sweep_config(typed):
    """The config the sweep's process composes for ``python -m transformer_lab.train -m
    <typed>``, with its ``hydra`` node (Hydra's compose API refuses sweep overrides)."""
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        loader = GlobalHydra.instance().config_loader()
        typed = [*typed, "hydra.mode=MULTIRUN"]
        return loader.load_configuration("train", typed, run_mode=RunMode.MULTIRUN)


def job_hparams(compose_train, typed, job):
    """``(listed keys, keys marked differs)`` of the sweep job composed from the overrides
    ``job`` of the sweep ``-m <typed>``, which recorded the keys it varies."""
    swept = sweep_record(sweep_config(typed)).swept
    cfg = compose_train(["hydra.mode=MULTIRUN", *job])
    params, overridden = run_hparams(cfg, HydraConfig.get().overrides.task)
    return list(params), differing_keys(swept, overridden)


ONE_JOB = ["model/norm=post", "depth=2", "optim.schedule=constant", "seed=0"]
SWEEPS = [  # (the command line after -m, a job's own overrides, the keys marked differs)
    # not experiment nor trainer.max_steps, which every job shares
    (NORM_COMPARISON, ONE_JOB, ITS_GRID),
    # a value the command line fixes wins over the grid's
    ([*NORM_COMPARISON, "seed=1"], ONE_JOB[:3], ITS_GRID - {"seed"}),
    (
        [*NORM_COMPARISON, "optim.lr=1e-3,3e-3"],
        [*ONE_JOB, "optim.lr=1e-3"],
        ITS_GRID | {"optim.lr"},
    ),
    (
        ["experiment=smoke", "model/norm=pre,post", "data.max_task_len=3"],
        ["model/norm=pre"],
        {"model.norm"},
    ),
    # the Optuna search space
    (
        ["hparams_search=optuna", "model/norm=pre"],
        ["optim.lr=0.002", "optim.warmup_steps=50"],
        {"optim.lr", "optim.warmup_steps"},
    ),
]


@pytest.mark.parametrize(("typed", "job", "differs"), SWEEPS)
def test_a_sweep_marks_only_the_keys_it_varies_as_differing(compose_train, typed, job, differs):
    fixed = [o for o in typed if "," not in o]  # as the sweeper composes a job
    listed, marked = job_hparams(compose_train, typed, [*fixed, *job])
    assert marked == differs
    assert listed[: len(fixed)] == [override_key(o.split("=")[0]) for o in fixed]  # still first


def test_a_job_that_its_launcher_started_by_its_own_command_marks_the_sweepers_params(
    compose_train, monkeypatch, tmp_path
):
    sweep_dir = tmp_path / "sweep"
    record = sweep_record(sweep_config(NORM_COMPARISON))  # in the sweep's process
    record.write(sweep_dir)
    monkeypatch.setattr(sys, "argv", ["/x/submitit/core/_submit.py", "/sweep/.submitit/1234"])
    job = [*NORM_COMPARISON, "model/norm=post", "depth=2", "optim.schedule=constant", "seed=0"]
    cfg = compose_train(["hydra.mode=MULTIRUN", f"hydra.sweep.dir={sweep_dir}", *job])
    context = RunContext.from_hydra()
    assert context.argv == record.argv != tuple(sys.argv)  # the sweep's command
    _, overridden = run_hparams(cfg, context.overrides)
    assert differing_keys(context.swept, overridden) == ITS_GRID


def test_a_single_run_marks_its_own_overrides_as_differing(compose_train):
    cfg = compose_train([*NORM_COMPARISON, "model/norm=pre"])
    _, overridden = run_hparams(cfg, HydraConfig.get().overrides.task)
    assert differing_keys(RunContext.from_hydra().swept, overridden) == {
        "experiment",
        "trainer.max_steps",
        "model.norm",
    }


def test_a_sweeps_entry_lists_only_what_it_varies_so_tensorboard_ticks_nothing_constant():
    """TensorBoard ticks the first five keys, the differing first: a constant listed after
    two swept keys would be ticked as if it varied."""
    params = {"model.ffn": "relu", "seed": 0, "data.batch_size": 64, "data.max_task_len": 10}
    differs = {"model.ffn", "seed"}
    assert shown_hparams(params, differs, frozenset(differs)) == {"model.ffn": "relu", "seed": 0}
    assert shown_hparams(params, {"seed"}, None) == params  # a single run: all of them
    assert shown_hparams(params, set(), frozenset()) == params  # nothing marked: all


def test_the_outcome_rules_accuracy_is_among_the_metrics_tensorboard_ticks(compose_train):
    names = metric_names(compose_train(["experiment=multi30k_warmup"]))
    assert names[:5] == (
        "val/loss",
        "val/seq_acc",
        "val/token_acc",  # what the rule judges: a translation's sentences are rarely all right
        "outcome/learned",
        "val/seq_acc_auc",
    )
    assert names[-4:] == ("val/bleu", "val/chrf", "test/bleu", "test/chrf")
    assert metric_names(compose_train([]))[:3] == ("val/loss", "val/seq_acc", "outcome/learned")
