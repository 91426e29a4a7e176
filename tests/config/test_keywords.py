"""A flat keyword interface generated from a typed config: a field is a keyword (or the one
its metadata names), a nested config's fields ``<field>_<its field>``; nothing kept by hand,
so a field added to the config is a keyword at once."""

import inspect
import re
from dataclasses import dataclass, field

import pytest

from transformer_lab.config.keywords import Keywords
from transformer_lab.config.validation import InvalidSetting, check_integer
from transformer_lab.model import Seq2SeqTransformer
from transformer_lab.model.config import KEYWORDS, TransformerConfig


@dataclass(frozen=True)
class Side:
    width: int | None = None


@dataclass(frozen=True)
class Shape:
    length: int = field(metadata={"help": "required"})
    kind: str = field(default="box", metadata={"keyword": "style"})
    left: Side = field(default_factory=Side)
    tags: dict = field(default_factory=dict)

    def __post_init__(self):
        check_integer("length", self.length, minimum=1)
        if self.left.width is not None:
            check_integer("left.width", self.left.width, minimum=0)


SHAPE = Keywords(Shape)


def test_the_keywords_are_the_fields_in_order_a_nested_ones_flattened_with_their_defaults():
    assert SHAPE.names == ["length", "style", "left_width", "tags"]
    parameters = SHAPE.signature().parameters
    assert [p.default for p in parameters.values()] == [inspect.Parameter.empty, "box", None, {}]


def test_positional_arguments_and_keywords_build_the_config_and_give_it_back():
    shape = SHAPE.build(3, "ring", left_width=2)
    assert shape == Shape(3, "ring", Side(2))
    assert SHAPE.of(shape) == {"length": 3, "style": "ring", "left_width": 2, "tags": {}}
    assert SHAPE.build(**SHAPE.of(shape)) == shape


def test_a_refused_value_is_named_by_the_keyword_the_caller_typed():
    with pytest.raises(InvalidSetting, match=re.escape("left_width=-1: out of range")):
        SHAPE.build(3, left_width=-1)


def test_what_python_would_refuse_is_a_type_error():
    with pytest.raises(TypeError, match="unexpected keyword argument 'lenght'"):
        SHAPE.build(lenght=3)
    with pytest.raises(TypeError, match="multiple values for argument 'length'"):
        SHAPE.build(3, length=4)
    with pytest.raises(TypeError, match="takes at most 4 positional arguments"):
        SHAPE.build(1, "a", 2, {}, 5)


def test_the_networks_signature_is_every_config_field_as_a_keyword_then_config():
    """DESIGN.md's calls: ``Seq2SeqTransformer(src_vocab_size, tgt_vocab_size, d_model=...,
    activation=..., ...)``."""
    names = list(inspect.signature(Seq2SeqTransformer).parameters)
    assert names == [*KEYWORDS.names, "config"]
    assert KEYWORDS.names[:3] == ["src_vocab_size", "tgt_vocab_size", "d_model"]  # positional
    flat = {"encoder_norm", "encoder_pos_encoding", "decoder_norm", "decoder_pos_encoding"}
    assert flat <= set(KEYWORDS.names) and "options" in KEYWORDS.names
    assert TransformerConfig.from_keywords(13, 11, activation="geglu").ffn == "geglu"
