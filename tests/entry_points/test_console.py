"""The library notices every entry point keeps off the terminal, and the warnings the lab
names (console.WARNINGS): each ignored only where it is unheard."""

import importlib
import logging
import os
import re
import warnings

import pytest

from transformer_lab.console import WARNINGS, quiet_library_notices, unheard


def test_font_reader_dynamo_and_profiler_notices_are_silenced(monkeypatch):
    monkeypatch.delenv("KINETO_LOG_LEVEL", raising=False)
    quiet_library_notices()
    for name in ("matplotlib.font_manager", "torch._dynamo.variables"):
        assert not logging.getLogger(name).isEnabledFor(logging.WARNING), name
    assert not logging.getLogger("tensorboard.backend").isEnabledFor(logging.INFO)
    assert logging.getLogger("torch._dynamo").isEnabledFor(logging.ERROR)
    assert logging.getLogger("transformer_lab").level == logging.NOTSET  # ours untouched
    assert os.environ["KINETO_LOG_LEVEL"] == "6"


@pytest.mark.parametrize("name", sorted(WARNINGS))
def test_every_named_warning_is_ignored_while_unheard_and_heard_after(name):
    notice = WARNINGS[name]
    module, _, cls = notice.category.rpartition(".")
    category = getattr(importlib.import_module(module), cls)
    pattern = notice.message.removeprefix(r"\s*").removesuffix("$")  # a message it matches:
    message = re.sub(r"\\(.)", r"\1", pattern.replace(r"\d+", "1").replace(".*", "x"))
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with unheard(name):
            warnings.warn(message, category, stacklevel=1)
        warnings.warn(message, category, stacklevel=1)
    assert [str(w.message) for w in shown] == [message], name


def test_a_logger_held_down_while_unheard_gets_its_own_level_back():
    logger = logging.getLogger("lightning.pytorch")
    logger.setLevel(logging.DEBUG)
    with unheard(loggers={"lightning.pytorch": logging.WARNING}):
        assert not logger.isEnabledFor(logging.INFO)
    assert logger.level == logging.DEBUG
    logger.setLevel(logging.NOTSET)


def test_lightnings_start_banners_are_dropped_and_its_other_lines_stay():
    quiet_library_notices()
    info = logging.getLogger("lightning.pytorch.utilities.rank_zero")
    assert not logging.getLogger("lightning.fabric.utilities.seed").isEnabledFor(logging.INFO)

    def passes(message: str) -> bool:
        record = info.makeRecord(info.name, logging.INFO, __file__, 1, message, (), None)
        return bool(info.filter(record))

    for banner in ("GPU available: False, used: False", "TPU available: False, using: 0"):
        assert not passes(banner)
    assert passes("`Trainer.fit` stopped: `max_steps=20` reached.")


def test_optuna_logs_through_the_labs_handlers_warnings_only():
    optuna = pytest.importorskip("optuna")
    from transformer_lab.console import quiet_optuna

    quiet_optuna()
    logger = logging.getLogger("optuna")
    assert logger.propagate  # into the lab's (Hydra's) handlers
    coloured = type(optuna.logging.create_default_formatter())
    assert not [h for h in logger.handlers if isinstance(h.formatter, coloured)]
    assert optuna.logging.get_verbosity() == optuna.logging.WARNING
