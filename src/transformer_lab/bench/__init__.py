"""Speed benchmarks against peers: ``python -m transformer_lab.bench``."""
