"""transformer_lab: see what the encoder-decoder Transformer's architectural choices do."""

__version__ = "0.1.0"
