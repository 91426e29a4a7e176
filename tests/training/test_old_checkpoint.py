"""A checkpoint written before the package was laid out by stage (``lit_module.py`` and the
rest at the package root) still evaluates and resumes: a checkpoint names no module path,
only settings and weights. The fixture is a 6-step run of a tiny smoke model, written by
commit 3ca5b5d; its metrics.json said test/loss 3.0082290172576904."""

import json
from pathlib import Path

import pytest
import torch

from transformer_lab.config.renamed import current_data_settings, current_settings
from transformer_lab.data import SyntheticDataModule
from transformer_lab.evaluate import evaluate
from transformer_lab.job.run import train
from transformer_lab.training.module import Seq2SeqLitModule

from ..conftest import eval_config

OLD = Path(__file__).resolve().parents[1] / "fixtures" / "checkpoint_before_stage_folders.ckpt"
ITS_RUN = [
    "experiment=smoke",
    "model.d_model=8",
    "model.d_ff=16",
    "model.num_heads=2",
    "model.num_encoder_layers=1",
    "model.num_decoder_layers=1",
    "data.train_size=64",
    "data.val_size=16",
    "data.test_size=16",
    "data.batch_size=16",
    "trainer.val_check_interval=3",
    "~callbacks.progress_bar",
]


def test_an_old_checkpoint_evaluates_to_its_runs_own_test_loss(tmp_path):
    cfg = eval_config(samples=0, beam_size=2)
    cfg.ckpt_path, cfg.output = str(OLD), str(tmp_path / "eval.json")
    results = evaluate(cfg)
    assert results["global_step"] == 6
    assert results["greedy"]["test/loss"] == pytest.approx(3.0082290172576904, abs=1e-6)


@pytest.mark.slow
def test_an_old_checkpoint_resumes_to_more_steps(compose_train, tmp_path):
    metrics = train(compose_train([*ITS_RUN, "trainer.max_steps=8", f"ckpt_path={OLD}"]))
    assert metrics["diverged"] == 0.0
    last = tmp_path / "run" / "checkpoints" / "last.ckpt"
    assert torch.load(last, weights_only=True)["global_step"] == 8


def test_an_old_checkpoints_settings_take_their_place_in_the_config_tree():
    """It saved one flat dict: ``activation`` (now ``model.ffn``), ``lr`` (now ``optim.lr``),
    ``compile``; it lacks the per-stack choices and cosine's floor, whose defaults build
    the model it trained (the stacks share the model's choices; no floor)."""
    saved = torch.load(OLD, weights_only=True)["hyper_parameters"]
    settings = current_settings(saved)
    assert set(settings) == {"model", "optim", "compile"}
    assert settings["model"]["ffn"] == saved["activation"] == "relu"
    assert settings["optim"]["lr"] == saved["lr"] and "lr" not in settings["model"]
    module = Seq2SeqLitModule(**settings)
    assert module.model.config.encoder.norm is None and module.optim.min_lr_ratio == 0.0
    assert current_settings(dict(module.hparams)) == dict(module.hparams)  # a tree stays


BEFORE_TYPED_CONFIG = OLD.with_name("checkpoint_before_typed_config.ckpt")
BEFORE_CONFIG_TREE = OLD.with_name("checkpoint_before_config_tree.ckpt")


@pytest.mark.parametrize(
    "checkpoint", [BEFORE_TYPED_CONFIG, BEFORE_CONFIG_TREE], ids=lambda p: p.stem
)
def test_a_checkpoint_from_before_the_config_changes_evaluates_to_the_same_numbers(
    checkpoint, tmp_path
):
    """Each a 6-step smoke run; the JSON beside it is what its version's evaluate gave for
    it, metric by metric. ``before_typed_config``: main at 6c36d16 (swiglu saved as
    ``activation``, rmsnorm, rotary with an ALiBi decoder, a pre-norm encoder under
    post-norm). ``before_config_tree``: main at 65aa4a9, one flat dict (gelu saved as
    ``ffn``, learned positions with a sinusoidal decoder, a post-norm encoder under
    pre-norm, label smoothing 0.1, cosine). Float32 sums differ in their last digits
    between CPUs (the JSONs were written on an AMD EPYC; an Intel Xeon's kernels give
    test/ppl 26.599794 for 26.599783), so each metric is held to a millionth of itself."""
    recorded = json.loads(checkpoint.with_suffix(".greedy.json").read_text())
    cfg = eval_config(samples=0, beam_size=2)
    cfg.ckpt_path, cfg.output = str(checkpoint), str(tmp_path / "eval.json")
    greedy = evaluate(cfg)["greedy"]
    assert greedy.keys() == recorded.keys()
    for name, value in recorded.items():
        assert greedy[name] == pytest.approx(value, rel=1e-6, abs=1e-6), name


def test_an_old_checkpoints_data_settings_take_their_task_length_names():
    """It saved ``min_len``/``max_len``/``test_long_max_len`` (now ``*_task_len``): they map
    to the data it trained on, which rebuilds with every setting as saved."""
    saved = torch.load(OLD, weights_only=True)["datamodule_hyper_parameters"]
    settings = current_data_settings(saved)
    assert (
        (settings["min_task_len"], settings["max_task_len"])
        == (3, 10)
        == (
            saved["min_len"],
            saved["max_len"],
        )
    )
    assert not {"min_len", "max_len", "test_long_max_len"} & set(settings)
    assert SyntheticDataModule(**settings).hparams == settings


@pytest.mark.slow
def test_a_pairs_checkpoint_that_saved_model_max_len_evaluates_as_one_saving_model_positions(
    compose_train, tmp_path
):
    """``data=pairs`` saved the model's positions as ``model_max_len`` (read back from
    ``${model.max_len}``); the job now passes them as ``model_positions``. A checkpoint
    with the old name evaluates to the same numbers."""
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("".join(f"a {i % 7} b\tb {i % 7} a {i % 5}\n" for i in range(400)))
    run = [*ITS_RUN, "data=pairs", f"data.train_path={pairs}", "data.tokenizer=word"]
    train(compose_train([*run, "trainer.max_steps=6", "data.val_size=16", "data.test_size=16"]))
    new = tmp_path / "run" / "checkpoints" / "last.ckpt"
    checkpoint = torch.load(new, weights_only=True)
    data = checkpoint["datamodule_hyper_parameters"]
    data["model_max_len"] = data.pop("model_positions")
    torch.save(checkpoint, old := tmp_path / "old.ckpt")
    results = {}
    for path in (new, old):
        cfg = eval_config(samples=0, beam_size=2)
        cfg.ckpt_path, cfg.output = str(path), str(tmp_path / f"{path.stem}.json")
        results[path] = evaluate(cfg)
    assert results[old]["greedy"] == results[new]["greedy"]
    assert results[old]["beam"] == results[new]["beam"]
    assert results[new]["greedy"]["test/loss"] > 0
