"""``compile=true`` trains as one graph per step, and the batch's entry point still
refuses a source row of nothing but PAD, which the compiled network no longer checks."""

import re

import lightning as L
import pytest
import torch
from torch._dynamo.utils import counters
from torch.utils.data import DataLoader

from transformer_lab.tokens import BOS, FIRST_CONTENT, PAD
from transformer_lab.training.module import Seq2SeqLitModule

VOCAB = 16


def batch(src: torch.Tensor) -> dict[str, torch.Tensor]:
    target = torch.full_like(src, FIRST_CONTENT)
    bos = torch.full((src.size(0), 1), BOS)
    return {"src": src, "tgt_in": torch.cat((bos, target[:, :-1]), 1), "tgt_out": target}


def fit(module: Seq2SeqLitModule, batches: list[dict], steps: int) -> L.Trainer:
    trainer = L.Trainer(
        accelerator="cpu",
        max_steps=steps,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        limit_val_batches=0,
    )
    trainer.fit(module, train_dataloaders=DataLoader(batches, batch_size=None))
    return trainer


@pytest.fixture
def compiled_module(lab_module) -> Seq2SeqLitModule:
    sizes = dict(d_model=16, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=32)
    vocab = dict(src_vocab_size=VOCAB, tgt_vocab_size=VOCAB, max_len=16)
    return lab_module(**sizes, **vocab, compile=True)


@pytest.mark.slow
def test_a_compiled_module_trains_without_a_graph_break(compiled_module):
    torch._dynamo.reset()
    counters.clear()
    src = torch.randint(FIRST_CONTENT, VOCAB, (4, 6), generator=torch.Generator().manual_seed(0))
    src[1, 3:] = PAD
    module = compiled_module
    before = [p.detach().clone() for p in module.parameters()]
    trainer = fit(module, [batch(src)] * 3, steps=3)
    assert trainer.global_step == 3
    assert any(not torch.equal(a, b) for a, b in zip(before, module.parameters(), strict=True))
    assert dict(counters["graph_break"]) == {}


def test_a_compiled_module_refuses_an_all_padding_source_row(compiled_module):
    src = torch.tensor([[5, 6, PAD], [PAD, PAD, PAD]])
    with pytest.raises(ValueError, match=re.escape("source rows [1] are all padding (PAD=0)")):
        fit(compiled_module, [batch(src)], steps=1)
