"""A run's few settings (:meth:`Run.settings`), as the report and the sequential sweeper read
them across a sweep: the same values as the whole config gives, at a fraction of the cost."""

from pathlib import Path

import pytest
from omegaconf import OmegaConf
from omegaconf.errors import ReadonlyConfigError

from transformer_lab.records import DamagedRecord
from transformer_lab.runs.reader import read_jobs

from ..report.conftest import hand_made_job

# a given config as Hydra saves one: interpolations unresolved, hypotheses and an outcome
# rule that every job of the sweep shares, a seed that each job has its own
GIVEN = """\
seed: {seed}
optim:
  lr: 0.001
  warmup_steps: 0
schedule_note: ${{optim.warmup_steps}} steps of warmup
outcome:
  metric: val/seq_acc
  threshold: 0.5
  at_steps: [400, 800]
hypotheses:
  - id: pre_learns_more
    metric: outcome/learned
    key: model.norm
    values: [pre, post]
    predicted: A better
    margin: 1e-3
"""


def sweep_of(folder: Path, seeds=(0, 1)) -> list:
    for seed in seeds:
        hand_made_job(
            folder, {"seed": seed}, {"outcome": "learned"}, config=GIVEN.format(seed=seed)
        )
    return read_jobs(folder)


def plain(config, key: str) -> str:
    """The value at top-level ``key`` as plain Python, written with its types (``1``,
    ``1.0`` and ``True`` compare equal, their reprs do not)."""
    return repr(OmegaConf.to_container(config, resolve=True)[key])


@pytest.mark.parametrize("given", [True, False])
def test_the_settings_read_as_the_whole_config_reads_them(tmp_path, given):
    run = sweep_of(tmp_path)[0]
    whole = run.config_as_given if given else run.config
    for key in ("seed", "optim", "outcome", "hypotheses"):
        assert plain(run.settings(key, given=given), key) == plain(whole, key)
    both = run.settings("outcome", "optim", given=given)
    assert list(both) == ["outcome", "optim"]
    assert all(plain(both, key) == plain(whole, key) for key in both)
    assert list(run.settings("absent", "seed", given=given)) == ["seed"]


def test_a_setting_that_interpolates_reads_its_value_from_the_whole_config(tmp_path):
    run = sweep_of(tmp_path)[0]
    # optim is not among the keys asked for, yet the interpolation into it resolves
    assert run.settings("schedule_note").schedule_note == "0 steps of warmup"


def test_settings_of_the_same_content_are_built_once_shared_and_read_only(tmp_path):
    first, second = sweep_of(tmp_path)
    hypotheses = first.settings("hypotheses", given=True)
    assert second.settings("hypotheses", given=True) is hypotheses  # the sweep's one rule
    assert first.settings("seed").seed == 0 and second.settings("seed").seed == 1
    with pytest.raises(ReadonlyConfigError):
        hypotheses.hypotheses[0].margin = 0.5  # a shared config cannot be changed by one reader
    assert second.settings("hypotheses", given=True).hypotheses[0].margin == 1e-3


def test_a_run_without_the_config_has_no_settings_and_a_damaged_one_is_named(tmp_path):
    job = hand_made_job(tmp_path, {"seed": 0}, {"outcome": "learned"})  # no config_resolved
    (run,) = read_jobs(tmp_path)
    assert run.settings("outcome") is None and run.config is None
    (job / "config_resolved.yaml").write_text("")
    with pytest.raises(DamagedRecord, match=r"config_resolved.yaml is damaged \(empty\)"):
        read_jobs(tmp_path)[0].settings("outcome")
    (job / "config_resolved.yaml").write_text("- a list\n")
    with pytest.raises(DamagedRecord, match=r"config_resolved.yaml is damaged \(not a mapping\)"):
        read_jobs(tmp_path)[0].settings("outcome")
