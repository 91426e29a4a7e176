"""A registry: the one list of an axis' names, its error message and its lookups."""

import re

import pytest

from transformer_lab.config.registry import Registry
from transformer_lab.config.validation import InvalidSetting


def test_a_registry_lists_its_names_in_the_order_they_were_registered_and_looks_them_up():
    shapes = Registry("shape")
    square = shapes.register("square")(type("Square", (), {}))
    circle = shapes.register("circle")(type("Circle", (), {}))
    assert list(shapes) == ["square", "circle"]
    assert shapes.lookup("circle") is circle
    assert shapes.name_of(square()) == "square"


@pytest.mark.parametrize(
    ("name", "setting", "message"),
    [
        ("oval", None, "shape='oval': unknown; allowed: square, circle"),
        ("oval", "inner_shape", "inner_shape='oval': unknown; allowed: square, circle"),
        (["square"], None, "shape=['square']: unknown; allowed: square, circle"),
    ],
)
def test_an_unknown_name_is_refused_naming_the_setting_and_every_registered_name(
    name, setting, message
):
    shapes = Registry("shape")
    shapes.register("square")(object)
    shapes.register("circle")(object)
    with pytest.raises(InvalidSetting, match=re.escape(message)):
        shapes.lookup(name, setting)
