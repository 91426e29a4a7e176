"""The encoder-decoder Transformer and its parts."""

from transformer_lab.model.transformer import DecoderCache, Seq2SeqTransformer

__all__ = ["DecoderCache", "Seq2SeqTransformer"]
