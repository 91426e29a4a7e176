"""A resumed data=pairs run reads its data with the tokenizer its weights were trained with,
taken from the checkpoint, even when the training file has changed since."""

import pytest
import torch

from transformer_lab.job.resume import learned_settings
from transformer_lab.job.run import train

pytestmark = pytest.mark.slow
TINY = [  # experiment=smoke's model and trainer (its data settings are the synthetic tasks')
    "model.d_model=32",
    "model.d_ff=64",
    "model.num_heads=2",
    "trainer.accelerator=cpu",
    "samples=0",
    "data=pairs",
    "data.tokenizer=char",
    "data.val_size=8",
    "data.test_size=8",
    "trainer.max_steps=4",
    "trainer.val_check_interval=4",
    "~callbacks.progress_bar",
    "~callbacks.norm_comparison",
]


def test_a_resume_keeps_the_checkpoints_tokenizer_though_the_file_changed(compose_train, tmp_path):
    data = tmp_path / "train.tsv"
    data.write_text("".join(f"ab {i}\tba {i}\n" for i in range(64)))
    first = [*TINY, f"data.train_path={data}"]
    train(compose_train(first))
    run, last = tmp_path / "run", tmp_path / "run" / "checkpoints" / "last.ckpt"
    learnt = torch.load(last, weights_only=True)["datamodule_hyper_parameters"]
    tokenizer = (run / "tokenizer.json").read_text()
    assert learnt["src_tokenizer_json"] == tokenizer

    data.write_text(data.read_text() + "xyz\tzyx\n" * 20)  # new characters: a new tokenizer
    resumed = compose_train([*first, "trainer.max_steps=6", f"ckpt_path={last}"], run="again")
    assert learned_settings(resumed, torch.load(last, weights_only=True)) == {
        "src_tokenizer_json": tokenizer,
        "tgt_tokenizer_json": tokenizer,
    }
    metrics = train(resumed)

    assert metrics["diverged"] == 0.0
    again = tmp_path / "again"  # (no .hydra in the first folder: not a run to continue in)
    after = torch.load(again / "checkpoints" / "last.ckpt", weights_only=True)
    assert after["global_step"] == 6
    assert after["datamodule_hyper_parameters"]["src_tokenizer_json"] == tokenizer
    assert (again / "tokenizer.json").read_text() == tokenizer


def test_a_fresh_start_and_data_that_learns_nothing_take_nothing(compose_train, tmp_path):
    assert learned_settings(compose_train(["experiment=smoke"]), None) == {}
    saved = {"datamodule_hyper_parameters": {"src_tokenizer_json": "{}"}}
    assert learned_settings(compose_train(["experiment=smoke"]), saved) == {}
