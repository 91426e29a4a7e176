"""The HPARAMS entry's hyper-parameters: the job's overrides first, one spelling per key,
then the curated set; never plumbing."""

import re
import sys

import pytest
from hydra.core.hydra_config import HydraConfig

from transformer_lab.config.validation import ConfigError
from transformer_lab.job.run import train
from transformer_lab.runs import command
from transformer_lab.runs.hparams import CURATED, differing_keys, override_key, run_hparams

NORM_COMPARISON = ["experiment=norm_comparison", "trainer.max_steps=100"]
ITS_GRID = {"model.norm", "depth", "model.schedule", "seed"}  # its hydra.sweeper.params


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


def job_hparams(compose_train, monkeypatch, argv, job):
    """``(listed keys, keys marked differs)`` of the sweep job composed from the overrides
    ``job`` in a process started as ``argv``."""
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.delenv(command.VARIABLE, raising=False)  # not a parallel sweep's worker
    cfg = compose_train(["hydra.mode=MULTIRUN", *job])
    params, overridden = run_hparams(cfg, HydraConfig.get().overrides.task)
    return list(params), differing_keys(HydraConfig.get(), overridden)


ONE_JOB = ["model/norm=post", "depth=2", "model.schedule=constant", "seed=0"]
SWEEPS = [  # (the command line after -m, a job's own overrides, the keys marked differs)
    # not experiment nor trainer.max_steps, which every job shares
    (NORM_COMPARISON, ONE_JOB, ITS_GRID),
    # a value the command line fixes wins over the grid's
    ([*NORM_COMPARISON, "seed=1"], ONE_JOB[:3], ITS_GRID - {"seed"}),
    (
        [*NORM_COMPARISON, "model.lr=1e-3,3e-3"],
        [*ONE_JOB, "model.lr=1e-3"],
        ITS_GRID | {"model.lr"},
    ),
    (
        ["experiment=smoke", "model/norm=pre,post", "data.max_len=3"],
        ["model/norm=pre"],
        {"model.norm"},
    ),
    # the Optuna search space
    (
        ["hparams_search=optuna", "model/norm=pre"],
        ["model.lr=0.002", "model.warmup_steps=50"],
        {"model.lr", "model.warmup_steps"},
    ),
]


@pytest.mark.parametrize(("typed", "job", "differs"), SWEEPS)
def test_a_sweep_marks_only_the_keys_it_varies_as_differing(
    compose_train, monkeypatch, typed, job, differs
):
    argv = ["/x/transformer_lab/train.py", "-m", *typed]
    fixed = [o for o in typed if "," not in o]  # as the sweeper composes a job
    listed, marked = job_hparams(compose_train, monkeypatch, argv, [*fixed, *job])
    assert marked == differs
    assert listed[: len(fixed)] == [override_key(o.split("=")[0]) for o in fixed]  # still first


def test_a_job_that_its_launcher_started_by_its_own_command_marks_the_sweepers_params(
    compose_train, monkeypatch
):
    argv = ["/x/submitit/core/_submit.py", "/sweep/.submitit/1234"]  # no overrides to read
    job = [*NORM_COMPARISON, "model/norm=post", "depth=2", "model.schedule=constant", "seed=0"]
    assert job_hparams(compose_train, monkeypatch, argv, job)[1] == ITS_GRID


def test_a_single_run_marks_its_own_overrides_as_differing(compose_train):
    cfg = compose_train([*NORM_COMPARISON, "model/norm=pre"])
    _, overridden = run_hparams(cfg, HydraConfig.get().overrides.task)
    assert differing_keys(HydraConfig.get(), overridden) == {
        "experiment",
        "trainer.max_steps",
        "model.norm",
    }
