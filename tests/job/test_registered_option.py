"""A new option is one class registered under its name: with nothing else edited, a run
selects it by its key, checks it, builds it, initialises it, trains with it, compares it
in the norm comparison's twins and draws its picture."""

import json
import math

import pytest
import torch
from torch import nn

from transformer_lab.job.run import train
from transformer_lab.model.init import OwnsInit
from transformer_lab.model.norms import NORM_TYPES
from transformer_lab.model.positional import (
    POSITIONAL_ENCODINGS,
    Panel,
    Picture,
    PositionalEncoding,
)

pytestmark = pytest.mark.slow  # a real (one-step) run


class ScaleNorm(nn.Module, OwnsInit):
    """Nguyen & Salazar (2019): ``g x / ||x||`` with one learned gain, initially
    ``sqrt(d_model)``."""

    def __init__(self, d_model: int):
        super().__init__()
        self.d_model = d_model
        self.gain = nn.Parameter(torch.empty(()))
        self.reset_parameters()

    @torch.no_grad()
    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        self.gain.fill_(math.sqrt(self.d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gain * x / x.norm(dim=-1, keepdim=True).clamp_min(1e-5)


class Ramp(PositionalEncoding):
    """Adds ``position / max_len`` to every dimension; its picture is that ramp."""

    def add(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        return x + (positions / self.max_len)[:, None].to(x.dtype)

    def picture(self, num_positions: int) -> Picture:
        ramp = (torch.arange(num_positions) / self.max_len)[:, None]  # [L, 1]
        return Picture([Panel(ramp, (0.0, 1.0), "", "position", "ramp")], (3.0, 5.0))


def test_an_option_registered_here_is_selected_built_trained_compared_and_drawn(
    compose_train, monkeypatch, tmp_path
):
    monkeypatch.setitem(NORM_TYPES, "scalenorm", ScaleNorm)
    monkeypatch.setitem(POSITIONAL_ENCODINGS, "ramp", Ramp)
    cfg = compose_train(
        [
            "experiment=smoke",
            "model.norm_type=scalenorm",
            "model.pos_encoding=ramp",
            "optim.schedule=constant",  # a first step at the full lr, not warmup's 0
            "trainer.max_steps=1",
            "trainer.val_check_interval=1",
            "~callbacks.progress_bar",
        ]
    )
    metrics = train(cfg)
    run = tmp_path / "run"
    assert metrics["diverged"] == 0.0 and math.isfinite(metrics["val/loss"])
    # every norm of the model is a ScaleNorm, its gain initialised by its own class to
    # sqrt(d_model 32) and moved by the one step, by at most Adam's first step (lr 1e-3)
    checkpoint = torch.load(run / "checkpoints" / "last.ckpt", weights_only=True)
    assert checkpoint["global_step"] == 1
    gains = [v.item() for k, v in checkpoint["state_dict"].items() if k.endswith(".gain")]
    assert len(gains) == 2 * 2 + 2 * 3  # post-norm: one per sublayer, 2 encoder + 2 decoder
    moved = [abs(gain - math.sqrt(32)) for gain in gains]
    assert max(moved) <= 1e-3 + 1e-6 and max(moved) > 1e-4
    assert checkpoint["hyper_parameters"]["model"]["norm_type"] == "scalenorm"
    # the norm comparison built a twin of every placement with the new norm type
    twins = json.loads((run / "norm_comparison.json").read_text())
    assert twins["model"]["norm_type"] == "scalenorm"
    assert (run / "positional_ramp.png").stat().st_size > 0
