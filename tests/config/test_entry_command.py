"""The command line shared by evaluate and generate (config/entry_command.py): the settings
file composed by Hydra with the arguments; a path's value, whatever it holds, reaches the
config as typed; anything but the file's settings is one error line."""

import pytest
from hydra.core.override_parser.overrides_parser import OverridesParser
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.config.entry_command import EvaluationError, configure, quoted

PARSER = OverridesParser.create()


@given(st.text())
def test_a_quoted_value_is_read_back_by_hydras_parser_as_typed(value):
    assert PARSER.parse_override(f"ckpt_path={quoted(value)}").value() == value


def test_paths_are_taken_as_typed_and_other_settings_as_hydra_reads_them():
    folder = r"outputs/multirun/x/model.norm=pre,seed=1/it's \ here\\"
    argv = [f"ckpt_path={folder}", "beam_size=8", "length_penalty=0.6", "data.test_size=null"]
    argv.append("output=a=b,c.json")
    cfg = configure(argv, "evaluate", ("ckpt_path", "output"))
    assert (cfg.ckpt_path, cfg.output) == (folder, "a=b,c.json")
    assert (cfg.beam_size, cfg.length_penalty, cfg.data.test_size) == (8, 0.6, None)
    generate = configure(["input=in,put=1.txt", "seed=3"], "generate", ("ckpt_path", "input"))
    assert (generate.input, generate.seed) == ("in,put=1.txt", 3)


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("+beam_size=3", "+beam_size is not a setting; allowed: beam_size, "),
        ("data.test_sise=3", "data.test_sise is not a setting; allowed: data.test_size, "),
        ("beam_size", "beam_size needs a value: beam_size=<value>"),
        ("beam_size=[1", "beam_size=[1: "),
    ],
)
def test_what_is_not_a_setting_with_a_value_is_refused_with_one_line(argument, message):
    with pytest.raises(EvaluationError) as refused:
        configure([argument], "evaluate", ("ckpt_path",))
    assert str(refused.value).startswith(message) and "\n" not in str(refused.value)
