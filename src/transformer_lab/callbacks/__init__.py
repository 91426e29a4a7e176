"""Lightning callbacks that make the architectural choices visible (conf/callbacks/default.yaml).

Each is imported where it is first named (``transformer_lab.callbacks.AttentionMaps``, as a
config's ``_target_`` names it), not with the package: the figure helpers here that the
report and the papers' figures draw with (:mod:`.plotting`, :mod:`.norm_figure`) load
without Lightning, so the reading tools start without importing it.
"""

import importlib

_HOMES = {  # each callback's module (and the interruption a callback raises)
    "AttentionMaps": "attention_maps",
    "DivergenceGuard": "divergence",
    "InterruptCheckpoint": "interrupt",
    "Interrupted": "interrupt",
    "LastCheckpoint": "last_checkpoint",
    "LayerStats": "layer_stats",
    "LengthSeries": "length_series",
    "NormComparison": "norm_comparison",
    "OneLineSummary": "model_summary",
    "PositionalMap": "positional_map",
    "SampleGenerations": "samples",
    "ScalarLayout": "scalar_layout",
    "StepProgressBar": "progress",
    "StopAtTarget": "stop_at_target",
    "TestDecoding": "test_decoding",
    "TrainingStability": "training_stability",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str):
    """``name`` from its module, imported now (PEP 562)."""
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
