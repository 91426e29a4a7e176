"""Bad input fails before training with one clear message, and touches nothing written
before (on the command line: tests/e2e/test_config_errors.py)."""

import pytest

from transformer_lab.config.validation import ConfigError
from transformer_lab.job.run import train

TINY = [
    "data.train_size=256",
    "data.val_size=32",
    "data.test_size=32",
    "trainer.max_steps=2",
    "trainer.val_check_interval=2",
    "~callbacks.progress_bar",
    "samples=0",
]

# (overrides, fragments the one error message must contain: the key, the value, what's allowed)
BAD_INPUTS = [
    (["model.d_model=30"], ["model.d_model=30: not divisible by num_heads=4", "multiple"]),
    (["model.d_model=33", "model.num_heads=3"], ["model.d_model=33: odd", "sinusoidal"]),
    (
        ["model.d_model=36", "model/pos_encoding=rotary"],
        ["model.d_model=36: the head dimension", "36/4=9 is odd", "rotary"],
    ),
    (["model.max_len=8"], ["model.max_len=8", "max_len >= 11"]),
    (
        ["data.test_long_size=16", "data.test_long_max_task_len=80"],
        ["model.max_len=64", "max_len >= 81"],
    ),
    (["data.vocab_size=3"], ["data.vocab_size=3: out of range; allowed: an integer >= 4"]),
    (["data.min_task_len=6", "data.max_task_len=5"], ["data.min_task_len=6: above max_task_len=5"]),
    (
        ["model.num_encoder_layers=0"],
        ["model.num_encoder_layers=0: out of range; allowed: an integer >= 1"],
    ),
    (["data.batch_size=0"], ["data.batch_size=0: out of range"]),
    (["data.train_size=-5"], ["data.train_size=-5: out of range"]),
    (["model.dropout=1.0"], ["model.dropout=1.0: out of range; allowed: a number in [0, 1)"]),
    (["optim.label_smoothing=1.5"], ["optim.label_smoothing=1.5: out of range", "[0, 1)"]),
    (["optim.warmup_steps=-1"], ["optim.warmup_steps=-1: out of range", "an integer >= 0"]),
    (["optim.schedule=cosin"], ["optim.schedule='cosin'", "linear_warmup, noam, cosine"]),
    (["threads=two"], ["threads='two': not a thread count; allowed: auto, or an integer >= 1"]),
    (["threads=0"], ["threads=0: not a thread count"]),
    (["data.task=rotate"], ["data.task='rotate': unknown", "reverse"]),
    (["ckpt_path=/nowhere/last.ckpt"], ["ckpt_path='/nowhere/last.ckpt' does not exist"]),
    (["ckpt_path=last"], ["ckpt_path=last", "no run of this experiment"]),
]


@pytest.mark.parametrize(
    ("overrides", "fragments"),
    BAD_INPUTS,
    ids=[" ".join(overrides) for overrides, _ in BAD_INPUTS],
)
def test_each_bad_input_is_one_config_error_before_training(
    compose_train, tmp_path, overrides, fragments
):
    cfg = compose_train([*TINY, *overrides, f"paths.outputs_root={tmp_path / 'outputs'}"])
    with pytest.raises(ConfigError) as error:
        train(cfg)
    for fragment in fragments:
        assert fragment in str(error.value), (overrides, fragment, str(error.value))
    assert not list(tmp_path.rglob("*.ckpt")) and not list(tmp_path.rglob("events.out.*"))
