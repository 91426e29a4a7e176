"""``python -m transformer_lab.train --help model``: every setting of the typed config with
the value the command line gives it, its help, its class's default and an option's choices,
rendered from the config and the registries, never written twice."""

import dataclasses
import re
from dataclasses import dataclass, field

from transformer_lab.config.help import topic_help
from transformer_lab.config.registry import Registry
from transformer_lab.model.config import AXES, StackConfig, TransformerConfig
from transformer_lab.training.optim import OptimConfig

from ..command_line import python_module, run_command_here


def help_of(tmp_path, *arguments: str):
    return run_command_here(python_module("transformer_lab.train", "--help", *arguments), tmp_path)


def line_of(text: str, key: str) -> str:
    (line,) = [line for line in text.splitlines() if line.strip().startswith(f"{key} = ")]
    return line


def test_the_model_help_gives_each_setting_its_value_help_default_and_choices(tmp_path):
    result = help_of(tmp_path, "model", "model.d_model=128", "model/norm=pre")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    for f in dataclasses.fields(TransformerConfig):
        if f.name not in ("encoder", "decoder", "options"):
            assert f.metadata["help"] in line_of(text, f"model.{f.name}"), f.name
    for stack in ("encoder", "decoder"):
        for f in dataclasses.fields(StackConfig):
            assert f.metadata["help"] in line_of(text, f"model.{stack}.{f.name}")
    d_model = line_of(text, "model.d_model")
    assert re.search(r"model\.d_model = 128 .*\(TransformerConfig's own default: 512\)", d_model)
    norm = line_of(text, "model.norm")
    assert norm.startswith("  model.norm = pre ")
    assert norm.endswith(
        f"choices: {', '.join(AXES['norm'])} (TransformerConfig's own default: post)"
    )
    assert f"choices: {', '.join(AXES['ffn'])}" in line_of(text, "model.ffn")


def test_the_optim_help_gives_each_optimisation_setting(tmp_path):
    result = help_of(tmp_path, "optim")
    assert result.returncode == 0, result.stderr
    for f in dataclasses.fields(OptimConfig):
        assert f.metadata["help"] in line_of(result.stdout, f"optim.{f.name}"), f.name


def test_a_typo_in_the_helps_overrides_is_refused_in_one_line(tmp_path):
    result = help_of(tmp_path, "model", "model.d_modle=128")
    assert result.returncode == 2
    assert result.stderr.startswith(
        "error: model.d_modle=128: no such setting; allowed: model.d_model"
    )
    assert result.stderr.count("\n") == 1


@dataclass(frozen=True)
class ReachSettings:
    reach: int = field(default=3, metadata={"help": "how far it looks"})


def test_an_options_own_settings_follow_with_their_values_and_help():
    """Every option that declares settings gets its section, at the run's values."""
    axis = Registry("pos_encoding")
    axis.register("plain")(type("Plain", (), {}))
    axis.register("far")(type("Far", (), {"Settings": ReachSettings}))
    values = {"pos_encoding": "far", "options": {"far": {"reach": 5}}}
    lines = topic_help("model", TransformerConfig, values, {"pos_encoding": axis}).splitlines()
    assert "  model.options.far: the settings of pos_encoding=far" in lines
    reach = line_of("\n".join(lines), "model.options.far.reach")
    assert "how far it looks (ReachSettings's own default: 3)" in reach
    assert reach.startswith("  model.options.far.reach = 5 ")
    assert not any("options.plain" in line for line in lines)
