"""``callbacks.test_decoding``: the run's closing test decodes by beam search, its validations
stay greedy, and a beam the model's vocabulary cannot hold is refused before the fit."""

from types import SimpleNamespace

import pytest

from transformer_lab.callbacks import TestDecoding
from transformer_lab.config.validation import InvalidSetting


def test_the_test_decodes_by_the_beam_and_the_module_is_greedy_again_after(lab_module):
    module = lab_module(src_vocab_size=16, tgt_vocab_size=16)
    trainer = SimpleNamespace()
    callback = TestDecoding(beam_size=4, length_penalty=0.6)
    callback.setup(trainer, module, "fit")
    assert (module.beam_size, module.length_penalty) == (1, 0.0)  # validations: greedy
    callback.on_test_start(trainer, module)
    assert (module.beam_size, module.length_penalty) == (4, 0.6)
    callback.on_test_end(trainer, module)
    assert (module.beam_size, module.length_penalty) == (1, 0.0)


def test_a_beam_wider_than_the_vocabulary_continues_is_refused_at_setup(lab_module):
    module = lab_module(src_vocab_size=16, tgt_vocab_size=8)  # 5 tokens a hypothesis can take
    with pytest.raises(InvalidSetting, match=r"^beam_size=6: beam_size must be between 1 and 5"):
        TestDecoding(beam_size=6).setup(SimpleNamespace(), module, "fit")


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"beam_size": 0}, "beam_size=0: out of range; allowed: an integer >= 1"),
        ({"length_penalty": -1}, "length_penalty=-1: out of range; allowed: a number >= 0"),
    ],
)
def test_settings_out_of_range_are_refused(settings, message):
    with pytest.raises(InvalidSetting) as refused:
        TestDecoding(**settings)
    assert str(refused.value) == message
