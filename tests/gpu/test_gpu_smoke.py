"""GPU smoke checks (``pytest -m gpu tests/gpu``): under 5 minutes on one GPU, skipped without.

The base model trains briefly in bf16, and the model's exactness properties (cached decoding
equals recomputation, causal and padding invariance) hold on CUDA kernels too.
"""

import json
import sys

import pytest
import torch

from transformer_lab.model import Seq2SeqTransformer
from transformer_lab.model.positional import POSITIONAL_ENCODINGS
from transformer_lab.tokens import BOS, PAD

from ..command_line import python_module, run_command, run_train

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]
ENCODINGS = list(POSITIONAL_ENCODINGS)


def test_the_base_model_trains_in_bf16_on_one_gpu(tmp_path):
    typed = [
        "experiment=paper_base",
        "trainer.max_steps=200",
        "trainer.val_check_interval=200",
        "data.train_size=25600",
        "data.val_size=256",
        "data.test_size=256",
        "~callbacks.progress_bar",
    ]
    result = run_train(tmp_path, *typed, cwd=tmp_path, timeout=240)
    assert result.returncode == 0, result.stderr[-3000:]
    (run,) = (tmp_path / "runs").iterdir()
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["global_step"] == 200
    assert metrics["val/loss"] < 9.0  # ln(8000) = 8.99: it learned something
    print(f"paper_base on GPU: 200 steps in {metrics['train_seconds']} s", file=sys.stderr)


@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("pos", ENCODINGS)
def test_cache_and_invariances_hold_on_cuda(norm, pos):
    model = (
        Seq2SeqTransformer(20, 20, 64, 4, 2, 2, 128, 0.0, norm, pos, "relu", 64, init_seed=0)
        .cuda()
        .eval()
    )
    src = torch.randint(3, 20, (4, 9), device="cuda")
    src[1, 5:] = PAD
    out = model.generate(src, 16, use_cache=True)
    assert torch.equal(out, model.generate(src, 16, use_cache=False))
    tgt_in = torch.randint(3, 20, (4, 7), device="cuda")
    tgt_in[:, 0] = BOS
    logits = model(src, tgt_in)
    changed = tgt_in.clone()
    changed[:, 4:] = 3
    torch.testing.assert_close(model(src, changed)[:, :4], logits[:, :4], atol=1e-5, rtol=1e-5)
    padded = torch.cat([src, torch.full((4, 3), PAD, device="cuda")], dim=1)
    torch.testing.assert_close(model(padded, tgt_in), logits, atol=1e-5, rtol=1e-5)


def test_the_benchmark_measures_every_row_on_the_gpu(tmp_path):
    rows_file = tmp_path / "rows.json"
    command = python_module("transformer_lab.bench", "--quick", "--device", "cuda")
    result = run_command([*command, "--json", str(rows_file)], tmp_path, timeout=240)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = json.loads(rows_file.read_text())
    unmeasured = [row["name"] for row in rows if row["ratio"] is None]
    assert sorted(name[name.index("[unavailable: ") :] for name in unmeasured) == [
        "[unavailable: CPU threads; this run is on cuda]",
        "[unavailable: skipped by --quick (compiling takes minutes)]",
        "[unavailable: skipped by --quick (two main jobs take minutes)]",
        "[unavailable: skipped by --quick (two real sweeps take minutes)]",
    ]
    (decoding,) = [row for row in rows if "KV cache" in row["name"]]
    assert "identical outputs" in decoding["name"]
