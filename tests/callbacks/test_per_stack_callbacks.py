"""The callbacks of a model whose stacks differ: the norm comparison's twins are those of
the run's architecture (both stacks at each placement), and the positional map draws each
stack's encoding."""

import json
from types import SimpleNamespace

import pytest

from transformer_lab.callbacks.norm_comparison import NormComparison
from transformer_lab.callbacks.positional_map import PositionalMap
from transformer_lab.data.datamodule import SyntheticDataModule

DATA = SyntheticDataModule(train_size=300, val_size=10, test_size=10, seed=0)
SIZES = dict(
    src_vocab_size=16, tgt_vocab_size=16, d_model=32, num_heads=2, d_ff=64, init_seed=0, norm="post"
)


def fake_trainer(folder):
    return SimpleNamespace(
        fast_dev_run=False, datamodule=DATA, default_root_dir=folder, loggers=[], global_step=0
    )


def twins_record(lab_module, folder, **stacks) -> dict:
    folder.mkdir()
    module = lab_module(**SIZES, **stacks)
    NormComparison(placements=["post", "pre"], batch_size=8).on_fit_start(
        fake_trainer(folder), module
    )
    return json.loads((folder / "norm_comparison.json").read_text())


@pytest.mark.slow
def test_a_hybrid_runs_twins_are_those_of_its_architecture_at_each_placement(lab_module, tmp_path):
    hybrid = twins_record(lab_module, tmp_path / "hybrid", encoder_norm="post", decoder_norm="pre")
    uniform = twins_record(lab_module, tmp_path / "uniform")  # post everywhere
    assert hybrid == uniform
    assert (hybrid["model"]["encoder_norm"], hybrid["model"]["decoder_norm"]) == (None, None)
    post, pre = (hybrid["grad_norm"][p]["decoder"]["ffn.w2"] for p in ("post", "pre"))
    assert post != pre  # two placements, not the hybrid twice


def test_the_positional_map_draws_each_stacks_encoding_and_a_shared_kind_once(lab_module, tmp_path):
    module = lab_module(**SIZES, encoder_pos_encoding="alibi", decoder_pos_encoding="sinusoidal")
    PositionalMap(max_positions=8).on_fit_start(fake_trainer(tmp_path), module)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "positional_alibi.png",
        "positional_sinusoidal.png",
    ]
    shared = tmp_path / "shared"
    shared.mkdir()
    PositionalMap(max_positions=8).on_fit_start(fake_trainer(shared), lab_module(**SIZES))
    assert [p.name for p in shared.iterdir()] == ["positional_sinusoidal.png"]
