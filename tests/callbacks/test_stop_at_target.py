"""The stop at the target: ``val/seq_acc`` at or above it at two validations in a row ends
the fit there, ``last.ckpt`` holding that step, and the run says why it ended. A scripted
module logs the accuracies, so each test says exactly which validations reach the target."""

import json

import lightning as L
import pytest
import torch
from torch.utils.data import DataLoader

from transformer_lab.callbacks import LastCheckpoint, StopAtTarget
from transformer_lab.callbacks.stop_at_target import how_fit_ended
from transformer_lab.config.validation import InvalidSetting
from transformer_lab.job.resume import RunFinished, check_unfinished


class ScriptedAccuracy(L.LightningModule):
    """Trains one weight on nothing; its n-th validation logs ``accuracies[n]``."""

    def __init__(self, accuracies: list[float]):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))
        self.accuracies, self.validations = accuracies, 0

    def training_step(self, batch, batch_idx):
        return (self.weight - 1).pow(2).sum()

    def validation_step(self, batch, batch_idx):
        pass

    def on_validation_epoch_end(self):
        if not self.trainer.sanity_checking:
            self.log("val/seq_acc", self.accuracies[self.validations])
            self.validations += 1

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def fit(tmp_path, accuracies, stop: StopAtTarget, max_steps: int = 10, ckpt_path=None):
    """A fit validating every 2 steps; the trainer and the LastCheckpoint callback."""
    last = LastCheckpoint(dirpath=str(tmp_path / "checkpoints"), every_n_train_steps=1000)
    trainer = L.Trainer(
        accelerator="cpu",
        default_root_dir=tmp_path,  # stop_at_target.json: every validation, for a resume
        max_steps=max_steps,
        val_check_interval=2,
        check_val_every_n_epoch=None,
        num_sanity_val_steps=0,
        callbacks=[stop, last],
        logger=False,
        enable_checkpointing=True,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    data = DataLoader(torch.zeros(100, 1), batch_size=1)
    trainer.fit(ScriptedAccuracy(accuracies), data, data, ckpt_path=ckpt_path)
    return trainer, last


def test_two_validations_in_a_row_at_the_target_stop_the_fit_and_save_that_step(tmp_path):
    # a lone validation at the target (step 2) goes on; the second in a row (step 8) stops
    stop = StopAtTarget(target=0.99, validations=2)
    trainer, last = fit(tmp_path, [0.995, 0.98, 0.99, 1.0, 0.5], stop)
    assert trainer.global_step == 8
    assert stop.stopped_at_step == 8
    saved = torch.load(last.path(trainer), weights_only=True)
    assert saved["global_step"] == 8  # last.ckpt is the run's end
    assert how_fit_ended(trainer, diverged_at=None) == {
        "stopped_early": True,
        "stop_reason": "val/seq_acc >= 0.99 at 2 consecutive validations "
        "(0.990 at step 6, 1.000 at step 8)",
    }


def test_no_target_trains_every_step(tmp_path):
    trainer, _ = fit(tmp_path, [1.0] * 5, StopAtTarget(target=None))
    assert trainer.global_step == 10
    ended = how_fit_ended(trainer, diverged_at=None)
    assert ended == {"stopped_early": False, "stop_reason": "trainer.max_steps=10 reached"}


def test_the_target_reached_only_at_the_final_step_is_no_early_stop(tmp_path):
    stop = StopAtTarget(target=0.99)
    trainer, _ = fit(tmp_path, [0.5, 0.5, 0.5, 0.99, 1.0], stop)
    assert (trainer.global_step, stop.stopped_at_step) == (10, None)
    assert not how_fit_ended(trainer, diverged_at=None)["stopped_early"]


def test_a_resumed_run_goes_on_counting_the_validations_at_the_target(tmp_path):
    first = StopAtTarget(target=0.99)
    trainer, last = fit(tmp_path, [0.5, 0.995], first, max_steps=4)  # ends at the target once
    assert first.streak == [(4, pytest.approx(0.995))]  # the final validation counted too
    resumed = StopAtTarget(target=0.99)
    trainer, _ = fit(tmp_path, [0.999, 0.5, 0.5], resumed, ckpt_path=str(last.path(trainer)))
    assert trainer.global_step == 6  # the first validation after the resume is the second


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"target": 1.5}, "target=1.5: out of range; allowed: a number in (0, 1]"),
        ({"target": 0.9, "validations": 0}, "validations=0: out of range; allowed: an integer"),
    ],
)
def test_bad_settings_are_refused_naming_them(settings, message):
    with pytest.raises(InvalidSetting, match=message.replace("(", r"\(").replace(")", r"\)")):
        StopAtTarget(**settings)


def record(run, **metrics):
    (run / "checkpoints").mkdir(parents=True)
    (run / "metrics.json").write_text(json.dumps(metrics))


def test_a_run_stopped_at_its_target_is_not_resumed_unless_the_stop_is_off(tmp_path):
    run = tmp_path / "run"
    reason = "val/seq_acc >= 0.985 at 2 consecutive validations (0.990 at step 1250, ...)"
    record(run, global_step=1500, diverged=False, stopped_early=True, stop_reason=reason)
    with pytest.raises(RunFinished) as finished:
        check_unfinished(run, max_steps=4500, stops_at_target=True)
    assert str(finished.value) == (
        f"run {run} stopped at step 1500: {reason} (metrics.json); nothing to resume. To "
        f"train further: ckpt_path={run}/checkpoints/last.ckpt stop_at_seq_acc=null"
    )
    check_unfinished(run, max_steps=4500, stops_at_target=False)  # stop off: train on
