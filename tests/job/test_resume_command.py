"""The checkpoint path in a printed resume command reaches Hydra exactly as it is on disk,
through the shell, quoted no more than it must be."""

import shlex

import pytest
from hydra.core.override_parser.overrides_parser import OverridesParser

from transformer_lab.job.resume import quote_for_hydra, shell_word

PATHS = [
    "/outputs/runs/2026-12-01_03-00-00-123456/checkpoints/last.ckpt",
    "/outputs/multirun/x/model.norm=pre,seed=1/checkpoints/last.ckpt",  # a sweep job's folder
    "/outputs/multirun/x/~callbacks.attention_maps/checkpoints/last.ckpt",
    "/home/o'neil/runs/a b/last.ckpt",
    "/home/zoë/last.ckpt",
]


@pytest.mark.parametrize("path", PATHS)
def test_hydra_reads_a_quoted_checkpoint_path_back_verbatim(path):
    (override,) = OverridesParser.create().parse_overrides([f"ckpt_path={quote_for_hydra(path)}"])
    assert override.value() == path


def test_a_plain_path_stays_unquoted():
    assert quote_for_hydra(PATHS[0]) == PATHS[0]
    assert quote_for_hydra(PATHS[1]) == f"'{PATHS[1]}'"


@pytest.mark.parametrize("path", PATHS)
def test_the_shell_and_hydra_read_the_printed_override_back_verbatim(path):
    (word,) = shlex.split(shell_word(f"ckpt_path={quote_for_hydra(path)}"))
    (override,) = OverridesParser.create().parse_overrides([word])
    assert override.value() == path


def test_a_sweep_jobs_checkpoint_reads_as_typed():
    """Hydra's quotes inside the shell's, not ``'ckpt_path='"'"'/...'"'"''``."""
    assert shell_word(f"ckpt_path={quote_for_hydra(PATHS[1])}") == f"\"ckpt_path='{PATHS[1]}'\""
    assert shell_word(f"ckpt_path={PATHS[0]}") == f"ckpt_path={PATHS[0]}"
    assert shell_word("model/norm=pre") == "model/norm=pre"
    assert shell_word("data.note=a b") == "'data.note=a b'"
