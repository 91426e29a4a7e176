"""transformer_lab: see what the encoder-decoder Transformer's architectural choices do."""

from importlib.metadata import version

__version__ = version("transformer_lab")  # pyproject.toml's, the one version string
