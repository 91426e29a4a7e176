"""Weight averaging (callbacks/averaging=ema|swa): the checkpoint holds the average, not the
raw weights, evaluate scores what the run tested, and a resumed run ends where an
uninterrupted one ends. (A run killed mid-way and resumed with averaging on:
test_kill_and_resume.py.)"""

import json

import pytest
import torch

from transformer_lab.evaluate import evaluate

from ..command_line import run_train_here
from ..conftest import eval_config
from .conftest import RESUMABLE

EMA = ["callbacks/averaging=ema", "callbacks.averaging.decay=0.9"]


def only_run(outputs_root):
    (run,) = (outputs_root / "runs").iterdir()
    return run


def with_max_steps(steps: int) -> list[str]:
    return [o for o in RESUMABLE if not o.startswith("trainer.max_steps=")] + [
        f"trainer.max_steps={steps}"
    ]


@pytest.mark.slow
def test_with_ema_the_checkpoint_holds_the_average_which_the_run_and_evaluate_test(tmp_path):
    """With test_weights=best: smoke's best.ckpt is of step 10 (see test_evaluate.py)."""
    done = run_train_here(tmp_path / "outputs", "experiment=smoke", "test_weights=best", *EMA)
    assert done.returncode == 0, done.stderr[-3000:]
    run = only_run(tmp_path / "outputs")
    checkpoint = torch.load(run / "checkpoints" / "best.ckpt", weights_only=True)

    averaged, raw = checkpoint["state_dict"], checkpoint["current_model_state"]
    assert averaged.keys() == raw.keys()
    weights = [k for k, v in averaged.items() if v.is_floating_point() and v.dim() >= 2]
    gaps = {k: (averaged[k] - raw[k]).abs().max().item() for k in weights}
    assert min(gaps.values()) > 1e-5  # every weight matrix: the average, not the weights
    assert int(checkpoint["averaging_state"]["n_averaged"]) == 10  # one update a step

    logged = json.loads((run / "metrics.json").read_text())
    results = evaluate(eval_config(ckpt_path=run, test_weights="best", beam_size=1, samples=0))
    tested = {k: v for k, v in logged.items() if k.startswith("test")}
    assert results["greedy"] == pytest.approx(tested, rel=1e-9, abs=0)  # the run tested it too
    torch.save(checkpoint | {"state_dict": raw}, tmp_path / "raw.ckpt")
    unaveraged = evaluate(eval_config(ckpt_path=tmp_path / "raw.ckpt", beam_size=1, samples=0))
    assert abs(unaveraged["greedy"]["test/loss"] - tested["test/loss"]) > 1e-3


@pytest.mark.slow
@pytest.mark.parametrize(
    "averaging", [EMA, ["callbacks/averaging=swa", "callbacks.averaging.start_fraction=0"]]
)
def test_a_run_extended_from_its_last_checkpoint_ends_as_an_uninterrupted_one(tmp_path, averaging):
    """20 steps, then ``ckpt_path=<its last.ckpt> trainer.max_steps=40``, against 40 steps
    at once: the average, the raw weights, the average's count and the metrics all equal."""
    straight = run_train_here(tmp_path / "straight", *with_max_steps(40), *averaging)
    assert straight.returncode == 0, straight.stderr[-3000:]
    first = run_train_here(tmp_path / "resumed", *with_max_steps(20), *averaging)
    assert first.returncode == 0, first.stderr[-3000:]
    run = only_run(tmp_path / "resumed")
    last = run / "checkpoints" / "last.ckpt"
    assert int(torch.load(last, weights_only=True)["averaging_state"]["n_averaged"]) == 20
    extended = run_train_here(
        tmp_path / "resumed", *with_max_steps(40), *averaging, f"ckpt_path={last}"
    )
    assert extended.returncode == 0, extended.stderr[-3000:]

    a = torch.load(only_run(tmp_path / "straight") / "checkpoints" / "last.ckpt", weights_only=True)
    b = torch.load(last, weights_only=True)
    assert b["global_step"] == 40
    assert int(a["averaging_state"]["n_averaged"]) == int(b["averaging_state"]["n_averaged"]) == 40
    for part in ("state_dict", "current_model_state"):
        assert a[part].keys() == b[part].keys()
        assert (
            max((a[part][k].float() - b[part][k].float()).abs().max().item() for k in a[part])
            <= 1e-6
        )
    expected = json.loads((only_run(tmp_path / "straight") / "metrics.json").read_text())
    got = json.loads((run / "metrics.json").read_text())
    for key in ("val/loss", "val/seq_acc", "test/loss", "test/token_acc", "global_step"):
        assert got[key] == pytest.approx(expected[key], abs=1e-6), key
