"""A sweep over experiments whose launchers differ is refused before it starts: Hydra would
launch every job with the sweep's own launcher (hydra #2946), not the experiment's (from
the command line: tests/e2e/test_experiments_sweep_refused.py)."""

import pytest

from transformer_lab.console import SCHEMA_NOTICE
from transformer_lab.sweep.checks import ConfigCheck

from .conftest import refusal

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings(f"ignore:{SCHEMA_NOTICE}"),
]  # composes every job of bundled sweeps

ADVICE = (
    "allowed: one launcher for every job, on the command line (-m hydra/launcher=joblib ...), "
    "or one sweep per experiment"
)


@pytest.mark.parametrize(
    "experiments",
    [
        "norm_pe_grid,lr_window",  # both choose joblib: neither applies
        "smoke,norm_pe_grid",  # one chooses joblib, one keeps the default
    ],
)
def test_experiments_with_their_own_launcher_are_refused_saying_what_to_do(
    sweep_config, capsys, experiments
):
    line = refusal(capsys, sweep_config([f"experiment={experiments}"]))
    first = next(e for e in experiments.split(",") if e != "smoke")
    assert line == (
        "error: hydra/launcher='joblib': chosen by this job's config, not by the sweep's; "
        "Hydra launches and expands every job of a sweep with the sweep's own settings "
        f"(hydra #2946), here hydra/launcher=basic; {ADVICE} (sweep job: experiment={first})"
    )


@pytest.fixture
def own_experiments(tmp_path) -> list[str]:
    """Experiments beside the bundled ones: ``side_by_side`` chooses the joblib launcher,
    ``four`` also its ``n_jobs``; neither has a grid. The overrides that find them."""
    folder = tmp_path / "experiment"
    folder.mkdir()
    launcher = "# @package _global_\ndefaults:\n  - override /hydra/launcher: joblib\n"
    (folder / "side_by_side.yaml").write_text(launcher)
    (folder / "four.yaml").write_text(launcher + "hydra:\n  launcher:\n    n_jobs: 4\n")
    return [f"hydra.searchpath=[file://{tmp_path}]"]


def test_an_experiments_own_launcher_is_refused_beside_one_without(
    sweep_config, capsys, own_experiments
):
    line = refusal(capsys, sweep_config([*own_experiments, "experiment=smoke,side_by_side"]))
    assert line.startswith("error: hydra/launcher='joblib': chosen by this job's config")
    assert line.endswith("(sweep job: experiment=side_by_side)")


@pytest.mark.parametrize("launcher", ["joblib", "basic"])
def test_a_launcher_on_the_command_line_launches_every_experiment(
    sweep_config, own_experiments, launcher
):
    overrides = [*own_experiments, f"hydra/launcher={launcher}"]
    config = sweep_config([*overrides, "experiment=smoke,side_by_side"])
    ConfigCheck().on_multirun_start(config)  # every job's config has the sweep's launcher


def test_experiments_that_keep_the_default_launcher_sweep_as_before(sweep_config, large_machine):
    # paper_base asks for a GPU, which a machine without one refuses (tests/e2e/test_typos.py)
    config = sweep_config(["experiment=smoke,paper_base", "trainer.accelerator=auto"])
    ConfigCheck().on_multirun_start(config)


def test_a_launcher_setting_only_an_experiment_makes_is_refused(
    sweep_config, capsys, own_experiments
):
    overrides = [*own_experiments, "hydra/launcher=joblib"]
    line = refusal(capsys, sweep_config([*overrides, "experiment=four,side_by_side"]))
    assert line == (
        "error: hydra.launcher.n_jobs=4: set by this job's config, not by the sweep's; Hydra "
        "launches and expands every job of a sweep with the sweep's own settings (hydra "
        "#2946), here ${sweep_n_jobs:${trainer.accelerator}}; allowed: one value for every "
        "job, on the command line, or one sweep per experiment (sweep job: experiment=four)"
    )


def test_an_experiments_grid_is_refused_in_a_sweep_over_experiments(sweep_config, capsys):
    """Its jobs are composed after the expansion: the grid would silently not apply."""
    config = sweep_config(["hydra/launcher=joblib", "experiment=smoke,norm_comparison"])
    line = refusal(capsys, config)
    assert line == (
        "error: hydra.sweeper.params.model/norm='post,pre': set by this job's config, not by "
        "the sweep's; Hydra launches and expands every job of a sweep with the sweep's own "
        "settings (hydra #2946), here None; allowed: one value for every job, on the command "
        "line, or one sweep per experiment (sweep job: experiment=norm_comparison)"
    )
    ConfigCheck().on_multirun_start(sweep_config(["experiment=norm_comparison"]))
