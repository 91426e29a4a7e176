"""AdamW runs fused where torch has the kernels and Lightning can clip for it, with the
updates of the per-parameter loop to float rounding."""

import lightning as L
import pytest
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from transformer_lab.model import Seq2SeqTransformer
from transformer_lab.tokens import BOS, FIRST_CONTENT
from transformer_lab.training.module import adamw

SIZES = dict(d_model=32, num_heads=2, num_encoder_layers=2, num_decoder_layers=2, d_ff=64)
VOCAB = 16


def batches(n: int, size: int = 8, length: int = 6) -> list[dict[str, torch.Tensor]]:
    generator = torch.Generator().manual_seed(0)
    out = []
    for _ in range(n):
        target = torch.randint(FIRST_CONTENT, VOCAB, (size, length), generator=generator)
        src = torch.randint(FIRST_CONTENT, VOCAB, (size, length), generator=generator)
        bos = torch.full((size, 1), BOS)
        out.append({"src": src, "tgt_in": torch.cat((bos, target[:, :-1]), 1), "tgt_out": target})
    return out


def model() -> Seq2SeqTransformer:
    return Seq2SeqTransformer(VOCAB, VOCAB, **SIZES, dropout=0.0, max_len=16, init_seed=0)


def test_fused_adamw_makes_the_updates_of_the_loop_to_float_rounding():
    """Both optimizers get the same gradients each step (those of the looped side), so
    that a gradient of pure rounding noise (the attention keys' bias: softmax ignores it)
    cannot make the two sides' weights drift apart through Adam's sign-like update."""
    looped_model, fused_model, initial = model(), model(), model()
    settings = dict(lr=3e-3, betas=(0.9, 0.98), weight_decay=0.01)
    looped = adamw(looped_model, **settings, fused=False)
    fused = adamw(fused_model, **settings, fused=True)
    for batch in batches(5):
        logits = looped_model(batch["src"], batch["tgt_in"])  # [B, T, V]
        F.cross_entropy(logits.flatten(0, 1), batch["tgt_out"].flatten()).backward()
        for a, b in zip(looped_model.parameters(), fused_model.parameters(), strict=True):
            b.grad = a.grad.clone()
        looped.step()
        fused.step()
        looped.zero_grad(set_to_none=True)
        fused.zero_grad(set_to_none=True)
    steps = zip(looped_model.parameters(), initial.parameters(), strict=True)
    moved = max((a - b).abs().max().item() for a, b in steps)
    assert moved > 1e-2  # five steps of lr 3e-3 moved the weights
    for a, b in zip(fused_model.parameters(), looped_model.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7)


def fitted_optimizer(lab_module, **trainer_settings) -> torch.optim.Optimizer:
    vocab = dict(src_vocab_size=VOCAB, tgt_vocab_size=VOCAB, max_len=16)
    module = lab_module(**SIZES, **vocab, dropout=0.0)
    trainer = L.Trainer(
        accelerator="cpu",
        max_steps=2,
        gradient_clip_val=1.0,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        limit_val_batches=0,
        **trainer_settings,
    )
    trainer.fit(module, train_dataloaders=DataLoader(batches(2), batch_size=None))
    assert trainer.global_step == 2
    return trainer.optimizers[0]


@pytest.mark.slow
def test_the_main_jobs_fp32_fit_on_a_cpu_runs_adamw_fused(lab_module):
    optimizer = fitted_optimizer(lab_module)
    assert [group["fused"] for group in optimizer.param_groups] == [True, True]


@pytest.mark.slow
def test_mixed_precision_with_clipping_trains_on_the_loop_which_lightning_can_clip(lab_module):
    # Lightning refuses to clip a fused optimizer's gradients under mixed precision
    optimizer = fitted_optimizer(lab_module, precision="bf16-mixed")
    assert [group["fused"] for group in optimizer.param_groups] == [None, None]
