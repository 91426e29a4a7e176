"""Lightning callbacks that make the architectural choices visible (conf/callbacks/default.yaml)."""

from transformer_lab.callbacks.attention_maps import AttentionMaps
from transformer_lab.callbacks.divergence import DivergenceGuard, diverged_at_step
from transformer_lab.callbacks.interrupt import InterruptCheckpoint, Interrupted
from transformer_lab.callbacks.last_checkpoint import LastCheckpoint
from transformer_lab.callbacks.layer_stats import LayerStats
from transformer_lab.callbacks.length_series import LengthSeries
from transformer_lab.callbacks.model_summary import OneLineSummary
from transformer_lab.callbacks.norm_comparison import NormComparison
from transformer_lab.callbacks.positional_map import PositionalMap
from transformer_lab.callbacks.progress import StepProgressBar
from transformer_lab.callbacks.samples import SampleGenerations
from transformer_lab.callbacks.scalar_layout import ScalarLayout
from transformer_lab.callbacks.stop_at_target import StopAtTarget, how_fit_ended
from transformer_lab.callbacks.test_decoding import TestDecoding
from transformer_lab.callbacks.training_stability import TrainingStability, training_stability

__all__ = [
    "AttentionMaps",
    "DivergenceGuard",
    "InterruptCheckpoint",
    "Interrupted",
    "LastCheckpoint",
    "LayerStats",
    "LengthSeries",
    "NormComparison",
    "OneLineSummary",
    "PositionalMap",
    "SampleGenerations",
    "ScalarLayout",
    "StepProgressBar",
    "StopAtTarget",
    "TestDecoding",
    "TrainingStability",
    "diverged_at_step",
    "how_fit_ended",
    "training_stability",
]
