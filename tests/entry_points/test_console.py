"""The library notices every entry point keeps off the terminal."""

import logging
import os

from transformer_lab.console import quiet_library_notices


def test_font_reader_dynamo_and_profiler_notices_are_silenced(monkeypatch):
    monkeypatch.delenv("KINETO_LOG_LEVEL", raising=False)
    quiet_library_notices()
    for name in ("matplotlib.font_manager", "torch._dynamo.variables"):
        assert not logging.getLogger(name).isEnabledFor(logging.WARNING), name
    assert not logging.getLogger("tensorboard.backend").isEnabledFor(logging.INFO)
    assert logging.getLogger("torch._dynamo").isEnabledFor(logging.ERROR)
    assert logging.getLogger("transformer_lab").level == logging.NOTSET  # ours untouched
    assert os.environ["KINETO_LOG_LEVEL"] == "6"
