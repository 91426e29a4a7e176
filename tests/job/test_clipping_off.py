"""``trainer.gradient_clip_val=null`` (no clipping) in every bundled experiment: its config
passes the check, and a tiny run of it trains and records that nothing was clipped."""

import json
from pathlib import Path

import pytest
from hydra.core.hydra_config import HydraConfig

from transformer_lab.job.checks import check_config
from transformer_lab.job.run import train

from ..real_corpora import MULTI30K, needs_multi30k

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"
EXPERIMENTS = sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml"))
TINY = [  # a few steps of each experiment's own model, trainer and callbacks
    "trainer.gradient_clip_val=null",
    "trainer.max_steps=3",
    "trainer.val_check_interval=2",
    "data.train_size=96",
    "data.val_size=16",
    "data.test_size=16",
    "data.batch_size=8",
    "samples=0",
    "~callbacks.progress_bar",
]

# the real corpus (these machines' copy), read whole, learnt from its first 96 pairs: a
# small vocabulary, whose longest sentences need 77 positions; its depth, not its width
REAL_CORPUS = [
    f"data.data_dir={MULTI30K}",
    "data.vocab_size=300",
    "model.max_len=128",
    *("model.d_model=32", "model.d_ff=64", "model.num_heads=2"),
]
ON_A_CPU = {
    # trainer=gpu, bf16-mixed: the same precision on the CPU, for a model of its depth and
    # vocabularies but not its width, on short sources, without the pictures (57M
    # parameters, their twins and 64-word decodes: minutes a step)
    "paper_base": [
        "trainer.accelerator=cpu",
        "model.d_model=32",
        "model.d_ff=64",
        "model.num_heads=2",
        "data.min_task_len=3",
        "data.max_task_len=8",
        "~callbacks.norm_comparison",
        "~callbacks.attention_maps",
        "~callbacks.layer_stats",
    ],
    "pe_extrapolation": ["data.test_long_size=16"],
    "multi30k_base": REAL_CORPUS,
    "multi30k_warmup": REAL_CORPUS,
    "multi30k_warmup_bleu": REAL_CORPUS,
}


@pytest.fixture(autouse=True, scope="module")
def one_thread(one_thread):
    """Tiny models: torch on one thread (the fixture of tests/conftest.py)."""


@pytest.mark.slow
@pytest.mark.parametrize(
    "experiment",
    [pytest.param(e, marks=needs_multi30k) if "multi30k" in e else e for e in EXPERIMENTS],
)
def test_every_experiment_trains_with_clipping_off(compose_train, tmp_path, experiment):
    cfg = compose_train([f"experiment={experiment}", *TINY, *ON_A_CPU.get(experiment, [])])
    assert cfg.trainer.gradient_clip_val is None
    check_config(cfg, HydraConfig.get())
    train(cfg)
    written = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert written["global_step"] == 3
    assert written["train/clip_fraction"] == 0.0  # nothing clipped
    assert written["train/grad_norm_max"] > 0.0  # but measured
