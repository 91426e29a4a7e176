"""The report says once what the sweep's jobs ran, and warns when they ran different code."""

import json

from transformer_lab.report.provenance import provenance_section
from transformer_lab.report.sweep import load_sweep

ENVIRONMENT = {
    "python": "3.11.7",
    "transformer_lab": "0.1.0",
    "torch": "2.13.0+cpu",
    "lightning": "2.6.6",
    "hydra-core": "1.3.8",
    "git_commit": "a" * 40,
    "git_dirty": False,
    "gpus": [],
}


def sweep_of(tmp_path, environments: dict[str, dict]):
    for name, environment in environments.items():
        (tmp_path / name / ".hydra").mkdir(parents=True)
        (tmp_path / name / ".hydra" / "overrides.yaml").write_text(f"- seed={name[-1]}\n")
        (tmp_path / name / "environment.json").write_text(json.dumps(environment))
    return load_sweep(tmp_path)


def test_versions_are_listed_once_for_a_sweep_that_ran_one_code(tmp_path):
    lines = provenance_section(sweep_of(tmp_path, {"seed=0": ENVIRONMENT, "seed=1": ENVIRONMENT}))
    text = "\n".join(lines)
    assert f"Every job ran transformer_lab 0.1.0, commit {'a' * 12}." in text
    assert "Warning" not in text
    assert text.count("| 3.11.7 | 0.1.0 | 2.13.0+cpu | 2.6.6 | 1.3.8 |") == 1


def test_jobs_on_different_commits_or_a_dirty_tree_are_a_warning_naming_them(tmp_path):
    dirty = ENVIRONMENT | {"git_dirty": True}
    resumed_elsewhere = ENVIRONMENT | {"resumed": [ENVIRONMENT | {"git_commit": "b" * 40}]}
    text = "\n".join(
        provenance_section(
            sweep_of(
                tmp_path, {"seed=0": ENVIRONMENT, "seed=1": dirty, "seed=2": resumed_elsewhere}
            )
        )
    )
    assert "**Warning: the jobs of this sweep ran different code**" in text
    assert f"- transformer_lab 0.1.0, commit {'a' * 12} with changes: `seed=1`" in text
    assert f"- transformer_lab 0.1.0, commit {'b' * 12}: `seed=2`" in text


def test_a_code_that_many_jobs_ran_names_three_of_them_and_counts_them_all(tmp_path):
    dirty = ENVIRONMENT | {"git_dirty": True}
    jobs = {f"seed={i}": dirty for i in range(5)} | {"seed=9": ENVIRONMENT}
    text = "\n".join(provenance_section(sweep_of(tmp_path, jobs)))
    expected = "with changes: 5 jobs: `seed=0`, `seed=1`, `seed=2`, ..."
    assert expected in text, text
