"""The contract of every private API the lab uses (``transformer_lab/private_apis.py``) with
the library versions ``pyproject.toml`` allows: each adapter answers on a real study,
sweeper and profile, and the installed versions are the allowed ones, so that a version
that moves a private name fails here, by name.

No other module of the lab reads a library's private name: a test walks the sources."""

import ast
import inspect
from importlib.metadata import requires, version
from pathlib import Path

import optuna
import pytest
import torch
import yaml
from packaging.requirements import Requirement
from torch.profiler import ProfilerActivity, profile

from transformer_lab import private_apis
from transformer_lab.sweep.study import study_storage

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "transformer_lab"


def allowed(name: str) -> Requirement:
    """The requirement on ``name`` of the installed project (pyproject.toml's dependencies
    and extras)."""
    (found,) = [r for r in map(Requirement, requires("transformer_lab")) if r.name == name]
    return found


@pytest.mark.parametrize("name", ["torch", "hydra-optuna-sweeper", "omegaconf"])
def test_the_installed_version_is_one_the_project_allows(name):
    assert allowed(name).specifier.contains(version(name)), (name, version(name))


def test_optuna_is_the_version_the_sweeper_pins():
    (pin,) = [Requirement(r) for r in requires("hydra-optuna-sweeper") if r.startswith("optuna")]
    assert pin.specifier.contains(version("optuna")), (str(pin), version("optuna"))


def test_a_studys_storage_and_a_trials_id_name_the_trial_in_the_storage(tmp_path):
    study = optuna.create_study(storage=study_storage(tmp_path / "s.db"), study_name="s")
    first, second = study.ask(), study.ask()
    storage = private_apis.storage_of(study)
    assert isinstance(storage, optuna.storages.BaseStorage)
    assert private_apis.trial_id_of_number(study, 1) == private_apis.trial_id(second)
    assert private_apis.trial_id(first) != private_apis.trial_id(second)
    study.tell(second, 0.5)
    uncached = private_apis.uncached_storage(study)
    assert isinstance(uncached, optuna.storages.RDBStorage)  # under the per-process cache
    assert uncached.get_trial(private_apis.trial_id(second)).state.name == "COMPLETE"
    assert storage.get_trial(private_apis.trial_id(first)).state.name == "RUNNING"
    for method in ("is_heartbeat_enabled", "record_heartbeat", "get_heartbeat_interval"):
        assert callable(getattr(storage, method)), method


def test_the_sweepers_class_has_the_methods_and_attributes_the_shared_study_uses():
    sweeper = private_apis.optuna_sweeper_class()
    for method, parameters in {
        "_process_searchspace_config": [],
        "_parse_sweeper_params_config": [],
        "_get_directions": [],
        "_configure_trials": ["trials", "search_space_distributions", "fixed_params"],
        "setup": ["hydra_context", "task_function", "config"],
    }.items():
        assert list(inspect.signature(getattr(sweeper, method)).parameters)[1:] == parameters
    init = inspect.signature(sweeper.__init__).parameters
    assert {"sampler", "direction", "storage", "study_name", "n_trials", "n_jobs"} <= set(init)


def test_the_sweepers_parser_makes_a_search_space_and_the_fixed_values():
    space, fixed = private_apis.params_from_overrides(
        ["optim.lr=tag(log,interval(1e-4,1e-2))", "seed=3"]
    )
    assert isinstance(space["optim.lr"], optuna.distributions.LogUniformDistribution)
    assert fixed == {"seed": "3"}  # as typed: Hydra converts it when it composes the job


def test_a_profile_gives_its_memory_events_with_their_time_and_bytes():
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        torch.ones(1024).mul(2)
    memory = [e for e in private_apis.profiled_events(prof) if e.name() == "[memory]"]
    assert memory and all(isinstance(e.start_ns(), int) for e in memory)
    assert sum(e.nbytes() for e in memory if e.nbytes() > 0) >= 2 * 1024 * 4  # two tensors


def test_a_views_base_is_the_tensor_it_views_and_a_tensor_its_own():
    with torch.device("meta"):
        owner = torch.empty(4, 6)
    q, k = owner.chunk(2, dim=1)
    assert private_apis.view_base(q) is owner and private_apis.view_base(k.T) is owner
    assert private_apis.view_base(owner) is owner


def test_omegaconfs_loader_reads_yaml_1_2_floats_no_timestamps_and_refuses_a_duplicate_key():
    loader = private_apis.omegaconf_yaml_loader()
    assert yaml.load("lr: 1e-3\nday: 2026-12-07\n", Loader=loader) == {
        "lr": 0.001,
        "day": "2026-12-07",
    }
    with pytest.raises(yaml.constructor.ConstructorError, match="duplicate key a"):
        yaml.load("a: 1\na: 2\n", Loader=loader)


PRIVATE = {  # a library's private names, which only the adapter reads
    "_base",
    "_storage",
    "_trial_id",
    "_study_id",
    "_backend",
    "_get_node",
    "_save_config",
    "kineto_results",
    "hydra_plugins.hydra_optuna_sweeper._impl",
    "omegaconf._utils",
}


def test_no_module_but_the_adapter_reads_a_private_name():
    for path in [*PACKAGE.rglob("*.py"), *(ROOT / "src" / "hydra_plugins").rglob("*.py")]:
        if path.name == "private_apis.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            name = node.attr if isinstance(node, ast.Attribute) else None
            if isinstance(node, ast.ImportFrom):
                name = node.module
            assert name not in PRIVATE, f"{path.relative_to(ROOT)}: {name}"
