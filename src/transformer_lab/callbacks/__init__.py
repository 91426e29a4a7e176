"""Lightning callbacks that make the architectural choices visible (conf/callbacks/default.yaml)."""

from transformer_lab.callbacks.attention_maps import AttentionMaps
from transformer_lab.callbacks.divergence import DivergenceGuard, diverged_at_step
from transformer_lab.callbacks.interrupt import InterruptCheckpoint, Interrupted
from transformer_lab.callbacks.layer_stats import LayerStats
from transformer_lab.callbacks.norm_comparison import NormComparison
from transformer_lab.callbacks.positional_map import PositionalMap

__all__ = [
    "AttentionMaps",
    "DivergenceGuard",
    "InterruptCheckpoint",
    "Interrupted",
    "LayerStats",
    "NormComparison",
    "PositionalMap",
    "diverged_at_step",
]
