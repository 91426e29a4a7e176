"""``python -m transformer_lab.bench.sweep_check``: the sweep-start check's CPU time per 100
jobs, for a sweep given on the command line or the bundled ones."""

import pytest
from hydra.core.global_hydra import GlobalHydra

from transformer_lab.bench import sweep_check
from transformer_lab.config.jobs import job_overrides


@pytest.fixture(autouse=True)
def one_round(monkeypatch):
    monkeypatch.setattr(sweep_check, "ROUNDS", 1)
    GlobalHydra.instance().clear()


def test_a_sweep_given_on_the_command_line_gets_a_row_of_its_jobs_and_cpu_seconds(
    monkeypatch, capsys
):
    monkeypatch.setattr("sys.argv", ["sweep_check", "experiment=smoke", "seed=0,1,2"])
    sweep_check.main()
    header, _, row = capsys.readouterr().out.splitlines()
    assert header == "| sweep | jobs | CPU s per 100 jobs | of which composing |"
    name, jobs, check, composing = (cell.strip() for cell in row.strip("|").split("|"))
    assert (name, jobs) == ("experiment=smoke seed=0,1,2", "3")
    assert float(check) >= 0 and float(composing) >= 0  # numbers; no test asserts a time


@pytest.mark.parametrize("name", list(sweep_check.SWEEPS))
def test_the_bundled_sweeps_have_100_jobs_each(name):
    with sweep_check.sweep(["experiment=smoke", *sweep_check.SWEEPS[name]]) as config:
        assert len(job_overrides(config)) == 100
