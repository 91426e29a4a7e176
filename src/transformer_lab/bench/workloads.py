"""The sizes the benchmark runs at, their random batches, and one training step.

``d256`` is a mid-sized model where matmuls dominate a step; ``main`` is the main job's
model and batch (``conf/model/transformer.yaml``, ``conf/data/reverse.yaml``), where
Python and per-op overhead dominate; ``d512`` is the paper's base model's width and depth,
for a GPU; ``quick`` is a toy for the smoke test. A size names the device it runs on, and
its models and batches are made there. Batches are full-length rows of random content
tokens, so tokens per step is ``batch * length`` target positions on every side of a
comparison.
"""

from dataclasses import dataclass
from pathlib import Path

import torch
from omegaconf import OmegaConf
from torch import nn

import transformer_lab.conf
from transformer_lab.tokens import BOS, FIRST_CONTENT
from transformer_lab.training import module as lit_module
from transformer_lab.training.loss import token_nll


@dataclass(frozen=True)
class Size:
    label: str
    d_model: int
    num_heads: int
    layers: int  # encoder layers = decoder layers
    d_ff: int
    batch: int
    length: int
    vocab: int
    device: str = "cpu"

    def model_kwargs(self, norm: str, dropout: float) -> dict:
        """Arguments shared by our model and the peer."""
        return dict(
            src_vocab_size=self.vocab,
            tgt_vocab_size=self.vocab,
            d_model=self.d_model,
            num_heads=self.num_heads,
            num_encoder_layers=self.layers,
            num_decoder_layers=self.layers,
            d_ff=self.d_ff,
            dropout=dropout,
            norm=norm,
        )

    @property
    def tokens(self) -> int:
        """Target positions per batch."""
        return self.batch * self.length


D256 = Size("d256", d_model=256, num_heads=8, layers=3, d_ff=1024, batch=32, length=32, vocab=1000)
BASE = Size("d512", d_model=512, num_heads=8, layers=6, d_ff=2048, batch=64, length=64, vocab=8000)
MAIN = Size("d64", d_model=64, num_heads=4, layers=2, d_ff=256, batch=64, length=10, vocab=16)
QUICK = Size("d16", d_model=16, num_heads=2, layers=1, d_ff=32, batch=4, length=6, vocab=16)


def random_batch(size: Size, seed: int = 0) -> dict[str, torch.Tensor]:
    """``src``, ``tgt_in`` (BOS first), ``tgt_out``, each ``[batch, length]``."""
    generator = torch.Generator().manual_seed(seed)

    def tokens(length: int) -> torch.Tensor:
        return torch.randint(FIRST_CONTENT, size.vocab, (size.batch, length), generator=generator)

    target = tokens(size.length)
    bos = torch.full((size.batch, 1), BOS)
    batch = {
        "src": tokens(size.length),
        "tgt_in": torch.cat((bos, target[:, :-1]), 1),
        "tgt_out": target,
    }
    return {name: tensor.to(size.device) for name, tensor in batch.items()}


OPTIM_CONF = Path(transformer_lab.conf.__file__).parent / "optim" / "adamw.yaml"


def adamw(model: nn.Module, fused: bool | None = None) -> torch.optim.Optimizer:
    """The main job's optimizer: the LightningModule's parameter groups, with the settings
    of ``conf/optim/adamw.yaml``, read from there so that they cannot drift; fused
    where the main job's would be (``fused`` None), or as told."""
    conf = OmegaConf.load(OPTIM_CONF)
    if fused is None:
        fused = lit_module.fused_adamw_fits(next(model.parameters()).device, None)
    return lit_module.adamw(model, conf.lr, tuple(conf.betas), conf.weight_decay, fused)


def loss(model: nn.Module, batch: dict) -> torch.Tensor:
    """Token cross-entropy over non-PAD labels, as the main job trains."""
    return token_nll(model(batch["src"], batch["tgt_in"]), batch["tgt_out"])


def train_step(model: nn.Module, optimizer: torch.optim.Optimizer, batch: dict) -> None:
    """Forward, loss, backward, optimizer step."""
    loss(model, batch).backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
