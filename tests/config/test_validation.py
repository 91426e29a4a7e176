"""The settings errors of config/validation.py."""

import pickle

from transformer_lab.config.validation import InvalidSetting


def test_an_invalid_setting_survives_pickling_with_its_parts():
    error = pickle.loads(pickle.dumps(InvalidSetting("lr", "abc", "not a number", "> 0")))
    assert (error.key, error.value) == ("lr", "abc")
    assert str(error.within("optim")) == "optim.lr='abc': not a number; allowed: > 0"
