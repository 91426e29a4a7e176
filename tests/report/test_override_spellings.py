"""``model/norm=pre`` and ``model.norm=pre`` name one setting; the report groups by one key."""

import json

from omegaconf import OmegaConf

from transformer_lab.report.sweep import load_sweep


def test_a_group_slash_and_a_value_dot_report_under_one_key(tmp_path):
    for name, override in (
        ("a", "model/norm=pre"),
        ("b", "model.norm=post"),
        ("c", "model.norm=pre"),
    ):
        (tmp_path / name / ".hydra").mkdir(parents=True)
        OmegaConf.save([override, "seed=0"], tmp_path / name / ".hydra" / "overrides.yaml")
        (tmp_path / name / ".hydra" / "config.yaml").write_text("{}\n")
        (tmp_path / name / "metrics.json").write_text(json.dumps({"train_seconds": 1.0}))
    sweep = load_sweep(tmp_path)
    assert sweep.config_keys == ["model.norm"]
    configurations = sweep.configurations()
    assert [(config, len(runs)) for config, runs in configurations.items()] == [
        (("post",), 1),
        (("pre",), 2),
    ]
