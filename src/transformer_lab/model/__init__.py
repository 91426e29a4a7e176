"""The encoder-decoder Transformer and its parts."""

from transformer_lab.model import admin  # noqa: F401 (registers the admin placement)
from transformer_lab.model.config import StackConfig, TransformerConfig
from transformer_lab.model.transformer import DecoderCache, Seq2SeqTransformer

__all__ = ["DecoderCache", "Seq2SeqTransformer", "StackConfig", "TransformerConfig"]
