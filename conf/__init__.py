"""Hydra's configs, installed as the package ``transformer_lab.conf`` (through the link
``src/transformer_lab/conf``, see pyproject.toml), so transformer_lab finds them as
``pkg://transformer_lab.conf`` from any working directory. This file makes the folder an
importable package for that lookup."""
