"""Shared fixtures for the model tests: tiny models and padded batches.

The ``norm`` and ``pos_encoding`` fixtures are parametrized, so any test that asks for
both runs once per norm placement x positional encoding.
"""

import pytest
import torch

from transformer_lab.model import Seq2SeqTransformer
from transformer_lab.model.positional import POSITIONAL_ENCODINGS
from transformer_lab.model.residual import NORM_PLACEMENTS
from transformer_lab.tokens import BOS, PAD

NORMS = tuple(NORM_PLACEMENTS)
POS_ENCODINGS = tuple(POSITIONAL_ENCODINGS)

SRC_VOCAB = 13
TGT_VOCAB = 11
MAX_LEN = 16


@pytest.fixture(params=NORMS)
def norm(request) -> str:
    return request.param


@pytest.fixture(params=POS_ENCODINGS)
def pos_encoding(request) -> str:
    return request.param


def tiny_model(norm="post", pos_encoding="sinusoidal", dtype=torch.float64, **overrides):
    """A 2+2-layer, d_model=16, 2-head model (head dim 8) with dropout on, in eval mode."""
    kwargs = dict(
        src_vocab_size=SRC_VOCAB,
        tgt_vocab_size=TGT_VOCAB,
        d_model=16,
        num_heads=2,
        num_encoder_layers=2,
        num_decoder_layers=2,
        d_ff=32,
        dropout=0.1,
        norm=norm,
        pos_encoding=pos_encoding,
        max_len=MAX_LEN,
        init_seed=0,
    )
    kwargs.update(overrides)
    return Seq2SeqTransformer(**kwargs).to(dtype).eval()


@pytest.fixture(scope="session")
def make_model():
    """:func:`tiny_model` (a plain function: any scope may use it)."""
    return tiny_model


def right_padded(rows: list[list[int]]) -> torch.Tensor:
    """Token rows of unequal length -> ``[B, L]`` right-padded with PAD."""
    width = max(len(r) for r in rows)
    return torch.tensor([r + [PAD] * (width - len(r)) for r in rows])


@pytest.fixture
def batch() -> tuple[torch.Tensor, torch.Tensor]:
    """Source ``[3, 7]`` and decoder input ``[3, 6]``, both with right padding.

    Row 0 has no padding at all; rows 1 and 2 are padded in both the source and the
    decoder input, by different amounts. Every decoder row starts with BOS.
    """
    gen = torch.Generator().manual_seed(1234)
    src_lengths, tgt_lengths = (7, 4, 2), (6, 3, 5)
    src = right_padded(
        [torch.randint(3, SRC_VOCAB, (n,), generator=gen).tolist() for n in src_lengths]
    )
    tgt_in = right_padded(
        [[BOS, *torch.randint(3, TGT_VOCAB, (n - 1,), generator=gen).tolist()] for n in tgt_lengths]
    )
    return src, tgt_in
