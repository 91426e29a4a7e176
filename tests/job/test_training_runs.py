"""Real (tiny) training runs through the same code path as the CLI."""

import json
from pathlib import Path

import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from transformer_lab.job.build import build
from transformer_lab.job.run import train
from transformer_lab.model.admin import needs_profiling, residual_weights
from transformer_lab.model.positional import POSITIONAL_ENCODINGS
from transformer_lab.runs.learning_curve import read_scalars

from ..conftest import compose_run

pytestmark = pytest.mark.slow  # real training runs

TINY = ["experiment=smoke"]  # 20 steps of a d_model 32 model on 512 pairs


@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("pos", list(POSITIONAL_ENCODINGS))
def test_fast_dev_run_fits_every_norm_and_positional_encoding(compose_train, norm, pos):
    cfg = compose_train(
        [*TINY, f"model/norm={norm}", f"model/pos_encoding={pos}", "+trainer.fast_dev_run=2"]
    )
    datamodule, module, trainer = build(cfg)
    trainer.fit(module, datamodule=datamodule)
    assert trainer.global_step == 2
    assert torch.isfinite(trainer.callback_metrics["train/loss"])
    assert 0.0 <= float(trainer.callback_metrics["val/seq_acc"]) <= 1.0


def test_an_admin_run_profiles_its_omegas_on_the_first_batch_then_trains(compose_train):
    cfg = compose_train([*TINY, "model/norm=admin", "+trainer.fast_dev_run=2"])
    datamodule, module, trainer = build(cfg)
    assert needs_profiling(module.model)
    trainer.fit(module, datamodule=datamodule)
    assert trainer.global_step == 2 and not needs_profiling(module.model)
    omegas = [w.omega for w in residual_weights(module.model)]
    assert all(bool((omega > 1.0).all()) for omega in omegas[1:4]), "the encoder's grow from 1"


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory) -> tuple[Path, dict]:
    """``(run folder, what train returned)`` of one run of experiment=smoke, its outcome
    judged at step 10 too."""
    run = tmp_path_factory.mktemp("smoke") / "run"
    return run, train(compose_run(run, [*TINY, "outcome.at_steps=[10]"]))


def test_a_run_records_its_outcome_at_each_budget_from_its_own_validation(smoke_run):
    run, _ = smoke_run
    written = json.loads((run / "metrics.json").read_text())
    at_ten = dict(read_scalars(run)["val/seq_acc"])[9]  # the validation after update 10
    assert written["val/seq_acc@10"] == pytest.approx(at_ten)
    assert written["outcome@10"] == ("learned" if at_ten >= 0.5 else "stalled")
    assert written["outcome_rule"].endswith("(also at steps 10)")


def test_run_writes_config_checkpoints_events_and_metrics(smoke_run):
    run, metrics = smoke_run
    assert (run / "config_resolved.yaml").is_file()
    assert (run / "checkpoints" / "last.ckpt").is_file()
    assert (run / "checkpoints" / "best.ckpt").is_file()
    assert list(run.glob("events.out.tfevents.*"))
    written = json.loads((run / "metrics.json").read_text())
    assert written["global_step"] == 20
    for key in ("val/loss", "val/seq_acc", "val/token_acc", "val/ppl", "test/loss", "test/seq_acc"):
        assert written[key] == pytest.approx(metrics[key])
    assert written["val/ppl"] == pytest.approx(torch.tensor(written["val/loss"]).exp().item())

    events = EventAccumulator(str(run))
    events.Reload()
    for tag in ("train/loss", "train/lr"):  # every log_every_n_steps=5 of the 20 steps
        assert [e.step for e in events.Scalars(tag)] == [4, 9, 14, 19], tag


def test_checkpoint_loads_with_weights_only_and_rebuilds_the_model(smoke_run):
    from transformer_lab.training.module import Seq2SeqLitModule

    run, _ = smoke_run
    path = run / "checkpoints" / "last.ckpt"
    checkpoint = torch.load(path, weights_only=True)
    assert checkpoint["hyper_parameters"]["model"]["d_model"] == 32
    restored = Seq2SeqLitModule.load_from_checkpoint(path, weights_only=True)
    assert torch.equal(
        restored.model.output.weight, checkpoint["state_dict"]["model.output.weight"]
    )


def test_same_seed_gives_identical_metrics_and_weights_and_another_seed_does_not(
    compose_train, tmp_path
):
    def run(seed, name):
        cfg = compose_train([*TINY, f"seed={seed}", "trainer.deterministic=true"], run=name)
        metrics = train(cfg)
        last = tmp_path / name / "checkpoints" / "last.ckpt"
        return metrics, torch.load(last, weights_only=True)["state_dict"]

    (first, first_weights), (again, again_weights) = run(0, "first"), run(0, "again")
    other, other_weights = run(1, "other")
    assert first == again
    assert all(torch.equal(first_weights[k], again_weights[k]) for k in first_weights)
    assert first["val/loss"] != other["val/loss"]
    assert not torch.equal(
        first_weights["model.output.weight"], other_weights["model.output.weight"]
    )


def test_loss_falls_clearly_on_the_copy_task(compose_train):
    # 200 steps: at 150 the layered draw's val split ended at 0.501 of the initial loss
    cfg = compose_train(
        [
            *TINY,
            "data=copy",
            "trainer.max_steps=200",
            "trainer.val_check_interval=200",
            "optim.warmup_steps=50",
        ]
    )
    datamodule, module, trainer = build(cfg)
    datamodule.setup("fit")
    module.eval()
    with torch.no_grad():
        batch = datamodule.sample("val", 64)
        initial = torch.nn.functional.cross_entropy(
            module(batch["src"], batch["tgt_in"]).flatten(0, 1),
            batch["tgt_out"].flatten(),
            ignore_index=0,
        ).item()
    module.train()  # Lightning keeps the modes it finds
    trainer.fit(module, datamodule=datamodule)
    final = float(trainer.callback_metrics["val/loss"])
    assert final < 0.5 * initial, (initial, final)


def test_every_validation_the_closing_one_too_is_logged_at_the_step_before_its_update(
    compose_train, tmp_path
):
    learns_fast = [
        "data.min_task_len=1",
        "data.max_task_len=3",
        "optim.lr=1e-2",
        "optim.schedule=constant",
    ]
    quiet = ["~callbacks.attention_maps", "~callbacks.norm_comparison"]
    cfg = [*TINY, *learns_fast, *quiet, "trainer.max_steps=25", "trainer.val_check_interval=10"]
    train(compose_train([*cfg, "target_seq_acc=0.05"]))
    run = tmp_path / "run"
    scalars, written = read_scalars(run), json.loads((run / "metrics.json").read_text())

    run_summary = ("val/seq_acc_best", "val/seq_acc_auc", "val/steps_to_target")  # at the end
    tags = [tag for tag in scalars if tag.startswith("val/") and tag not in run_summary]
    validations = {tag: scalars[tag] for tag in tags}
    # per-length tags as well (train uses up every source of 1 and 2 words: val holds 3)
    assert validations["val/seq_acc_by_len/3"]
    for tag, points in validations.items():  # after updates 10, 20 and the last, 25
        assert [step for step, _ in points] == [9, 19, 24], tag
        assert written[tag] == pytest.approx(points[-1][1]), tag  # metrics.json: the closing one
    curve = scalars["val/seq_acc"]
    reached = next((step for step, value in curve if value >= 0.05), None)
    assert written.get("val/steps_to_target") == reached
    assert written["val/seq_acc_best"] == max(value for _, value in curve)
