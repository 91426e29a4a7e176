"""A ``???`` of ``conf/`` left out is refused naming the setting and what to give, read from
the comment beside the ``???`` (the command line's refusal: tests/e2e/test_config_errors.py)."""

import re
from importlib.resources import files

import pytest
from omegaconf import OmegaConf

from transformer_lab.config.mandatory import check_given, missing_settings, what_to_give
from transformer_lab.config.validation import InvalidSetting

CONF = files("transformer_lab.conf")


def mandatory_lines():
    """``(file, key)`` of every ``???`` in conf/."""
    for path in sorted(p for p in CONF.rglob("*.yaml")):
        for line in path.read_text().splitlines():
            if found := re.match(r"\s*(\w+):\s*\?\?\?", line):
                yield str(path.relative_to(CONF)), found[1]


def test_conf_has_mandatory_settings_to_check():
    assert ("data/pairs.yaml", "train_path") in list(mandatory_lines())


@pytest.mark.parametrize(("path", "leaf"), list(mandatory_lines()))
def test_every_mandatory_setting_of_conf_says_what_to_give(path, leaf):
    group, _, option = path.removesuffix(".yaml").rpartition("/")
    key = f"{group.replace('/', '.')}.{leaf}" if group else leaf
    given = what_to_give(key, {group: option} if group else {}, option)
    assert given.startswith("<") and given != "<value>", given
    assert len(given) > 12  # a description, not a bare word such as "required"


def test_the_settings_left_at_question_marks_are_found_without_resolving_anything():
    config = OmegaConf.create(
        {"a": "???", "b": {"c": "???", "d": 1, "e": "${hydra:runtime.cwd}"}, "f": ["???", 2]}
    )
    assert missing_settings(config) == ["a", "b.c", "f.0"]


def test_the_first_setting_left_out_is_refused_naming_the_group_option_that_needs_it():
    config = OmegaConf.create({"data": {"train_path": "???", "val_path": None}, "seed": 0})
    with pytest.raises(InvalidSetting) as refused:
        check_given(config, {"data": "pairs", "model": "transformer"})
    assert str(refused.value) == (
        "data.train_path='???': not given; data=pairs needs it; allowed: data.train_path=<the "
        "training pairs: a .tsv/.txt (source<TAB>target) or .jsonl/.ndjson file>"
    )


def test_a_setting_of_a_config_of_ones_own_is_refused_with_a_placeholder():
    config = OmegaConf.create({"corpus": {"root": "???"}})
    with pytest.raises(InvalidSetting, match=r"allowed: corpus\.root=<value>$"):
        check_given(config, {})


def test_a_config_without_question_marks_passes():
    check_given(OmegaConf.create({"data": {"train_path": "train.tsv"}}), {"data": "pairs"})
