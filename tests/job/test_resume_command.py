"""The checkpoint path in a printed resume command reaches Hydra exactly as it is on disk."""

import pytest
from hydra.core.override_parser.overrides_parser import OverridesParser

from transformer_lab.job.resume import quote_for_hydra

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
