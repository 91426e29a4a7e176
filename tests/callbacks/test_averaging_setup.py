"""Weight averaging that starts at a fraction of ``trainer.max_steps`` says so when a time
budget (``trainer.max_time``) may end the fit first, leaving nothing averaged; from the start
(an EMA's ``start_fraction=0``) it has nothing to say."""

import logging
from types import SimpleNamespace

import pytest
from lightning.pytorch.callbacks import Timer

from transformer_lab.callbacks.averaging import AveragedWeights


@pytest.mark.parametrize(("start_fraction", "warned"), [(0.8, True), (0.0, False)])
def test_a_late_start_under_a_time_budget_is_warned(caplog, lab_module, start_fraction, warned):
    module = lab_module(src_vocab_size=16, tgt_vocab_size=16, d_model=16, d_ff=32, num_heads=2)
    trainer = SimpleNamespace(max_steps=100_000, callbacks=[Timer(duration={"minutes": 30})])
    with caplog.at_level(logging.WARNING):
        AveragedWeights(start_fraction=start_fraction).setup(trainer, module, "fit")
    message = (
        "averaging starts at step 80000 (start_fraction=0.8 of trainer.max_steps=100000), "
        "which trainer.max_time may end the fit before"
    )
    assert (message in caplog.text) == warned


def test_without_a_time_budget_a_late_start_is_the_fraction_of_the_steps(caplog, lab_module):
    module = lab_module(src_vocab_size=16, tgt_vocab_size=16, d_model=16, d_ff=32, num_heads=2)
    callback = AveragedWeights(start_fraction=0.8)
    with caplog.at_level(logging.WARNING):
        callback.setup(SimpleNamespace(max_steps=1500, callbacks=[]), module, "fit")
    assert callback.start_step == 1200 and "averaging starts" not in caplog.text
