"""TrainingStability: the fraction of steps whose pre-clip gradient norm exceeded the clip,
the largest pre-clip norm and the loss spikes, on chosen gradients and losses; and in a
real run, measured before Lightning clips, into metrics.json and HPARAMS."""

import json
import math
from types import SimpleNamespace

import pytest
import torch

from transformer_lab.callbacks import TrainingStability
from transformer_lab.config.validation import InvalidSetting
from transformer_lab.job.run import train


def step(callback, clip, *grads):
    """One optimizer step whose parameters have the gradients ``grads``."""
    params = []
    for grad in grads:
        param = torch.nn.Parameter(torch.zeros_like(grad))
        param.grad = grad
        params.append(param)
    optimizer = SimpleNamespace(param_groups=[{"params": params}])
    callback.on_before_optimizer_step(SimpleNamespace(gradient_clip_val=clip), None, optimizer)


def losses(callback, values):
    for value in values:
        callback.on_train_batch_end(None, None, {"loss": torch.tensor(value)}, None, 0)


def test_the_norm_is_over_every_gradient_and_a_step_above_the_clip_counts_as_clipped():
    callback = TrainingStability()
    step(callback, 1.0, torch.tensor([3.0, 0.0]), torch.tensor([[4.0]]))  # norm 5
    step(callback, 1.0, torch.tensor([0.6, 0.0]), torch.tensor([[0.8]]))  # norm 1: not above
    step(callback, 1.0, torch.tensor([0.3]), torch.tensor([[0.4]]))  # 0.5
    step(callback, 1.0, torch.tensor([math.inf]))  # a non-finite norm is clipped, not a max
    summary = callback.summary()
    assert summary["train/clip_fraction"] == 2 / 4
    assert summary["train/grad_norm_max"] == pytest.approx(5.0)


@pytest.mark.parametrize("clip", [None, 0.0])
def test_with_clipping_off_nothing_counts_as_clipped(clip):
    callback = TrainingStability()
    step(callback, clip, torch.tensor([30.0, 40.0]))
    assert callback.summary() == {
        "train/clip_fraction": 0.0,
        "train/grad_norm_max": pytest.approx(50.0),
        "train/loss_spikes": 0.0,
    }


def test_a_spike_is_a_loss_above_twice_the_median_of_the_steps_before_it_counted_once():
    callback = TrainingStability(spike_factor=2.0, spike_window=50)
    # medians before each step: -, 2, 2, 2, 2 (5.0 > 4: a spike), 2 (still the same one),
    # 2, 2 (4.5 > 4: the second), 2
    losses(callback, [2.0, 2.0, 2.0, 2.0, 5.0, 5.0, 2.0, 4.5, 1.0])
    step(callback, 1.0, torch.tensor([1.0]))
    assert callback.summary()["train/loss_spikes"] == 2.0


def test_the_median_is_over_the_window_of_steps_before_it():
    callback = TrainingStability(spike_window=3)
    # after 1, 1, 1, 3, 3, 3 the last three are 3: 5 is below 2 x 3, no spike; with a
    # window of 50 the median would be 2 (of 1 1 1 3 3 3) and 5 a spike
    losses(callback, [1.0, 1.0, 1.0, 3.0, 3.0, 3.0, 5.0])
    step(callback, 1.0, torch.tensor([1.0]))
    assert callback.summary()["train/loss_spikes"] == 1.0  # the first 3 (> 2 x 1) only


def test_the_counts_go_on_after_a_resume():
    callback = TrainingStability()
    losses(callback, [1.0, 3.0])
    step(callback, 1.0, torch.tensor([2.0]))
    resumed = TrainingStability()
    resumed.load_state_dict(callback.state_dict())
    losses(resumed, [5.0])  # above 2 x median(1, 3): the same spike, still
    step(resumed, 1.0, torch.tensor([0.5]))
    assert resumed.summary() == {
        "train/clip_fraction": 0.5,
        "train/grad_norm_max": 2.0,
        "train/loss_spikes": 1.0,
    }
    assert TrainingStability().summary() == {}  # no step: nothing to say


def test_bad_settings_are_refused_naming_them():
    with pytest.raises(InvalidSetting) as error:
        TrainingStability(spike_factor=1.0)
    assert str(error.value) == "spike_factor=1.0: out of range; allowed: a number > 1"
    with pytest.raises(InvalidSetting) as error:
        TrainingStability(spike_window=0)
    assert str(error.value) == "spike_window=0: out of range; allowed: an integer >= 1"


QUIET = ["~callbacks.progress_bar", "~callbacks.attention_maps", "~callbacks.norm_comparison"]


@pytest.mark.slow
def test_a_run_measures_the_norm_before_the_clip(compose_train, tmp_path, read_hparams):
    # a clip far below any gradient: every step clipped, the largest norm the unclipped one
    train(compose_train(["experiment=smoke", *QUIET, "trainer.gradient_clip_val=1e-9"]))
    written = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert written["train/clip_fraction"] == 1.0
    assert written["train/grad_norm_max"] > 1e-3
    assert written["train/loss_spikes"] >= 0
    experiment, _ = read_hparams(tmp_path / "run")
    tags = [m.name.tag for m in experiment.metric_infos]
    assert tags[:5] == [
        "val/loss",
        "val/seq_acc",
        "outcome/learned",
        "val/seq_acc_auc",
        "val/steps_to_target",
    ]
    assert {"train/clip_fraction", "train/grad_norm_max", "train/loss_spikes"} <= set(tags)
