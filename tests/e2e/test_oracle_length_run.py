"""A run with a test_long split reports the oracle-length metrics of both test splits in
its metrics.json, by target position past the training lengths, and none for val."""

import json

import pytest

from ..command_line import run_train_here


@pytest.mark.slow
def test_metrics_json_holds_oracle_accuracy_by_position_past_the_training_lengths(tmp_path):
    result = run_train_here(
        tmp_path,
        "experiment=smoke",
        "data.test_long_size=48",
        "data.test_long_max_task_len=13",  # the training lengths are 3..10 words
        "~callbacks.progress_bar",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    (run,) = (tmp_path / "runs").iterdir()
    metrics = json.loads((run / "metrics.json").read_text())
    for split, longest in (("test", 10), ("test_long", 13)):
        prefix = f"{split}/oracle_token_acc_by_pos/"
        positions = sorted(int(k[len(prefix) :]) for k in metrics if k.startswith(prefix))
        assert positions == list(range(1, longest + 1)), split
        for name in ("oracle_seq_acc", "oracle_token_acc"):
            assert 0.0 <= metrics[f"{split}/{name}"] <= 1.0
        # exact match under the oracle length can only be easier than free exact match
        assert metrics[f"{split}/oracle_seq_acc"] >= metrics[f"{split}/seq_acc"]
    assert not [k for k in metrics if k.startswith("val/oracle")]
