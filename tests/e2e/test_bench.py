"""The benchmark runs end to end in its ``--quick`` toy mode, so it never rots.

No timing is asserted: the numbers of a toy run on a shared machine mean nothing.
"""

import json
import math

import pytest
import torch

from ..command_line import python_module, run_command, run_command_here

ROW_KEYS = {"name", "ours", "peer", "unit", "ratio"}
COMPARISONS = (
    "nn.Transformer",
    "Lightning / plain",
    "KV cache / recompute",
    "attention maps",
    "dense fp32 matmul",
    "peak memory",
    "bf16-mixed / fp32",
    "torch.compile",
    "fused AdamW / for-loop AdamW",
    "joblib",
    "start to exit: stop at the target / whole max_steps",
)


pytestmark = pytest.mark.slow  # a real --quick benchmark run in a subprocess


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bench")
    outputs = ["--json", str(folder / "rows.json"), "--markdown", str(folder / "rows.md")]
    command = python_module("transformer_lab.bench", "--quick", "--threads", "1", *outputs)
    done = run_command(command, folder)
    assert done.returncode == 0, done.stderr[-3000:]
    terminal = done.stdout + done.stderr
    assert "USDT" not in terminal  # the profiler's C++ chatter stays off the terminal
    assert "dense 64x64 matmul" in terminal  # a progress line for a row that has no table name
    rows = json.loads((folder / "rows.json").read_text())
    markdown = (folder / "rows.md").read_text().splitlines()
    assert len(markdown) == 2 + len(rows)  # header, rule, one line per row
    return rows


def test_every_row_has_name_ours_peer_unit_and_ratio_ours_over_peer(rows):
    for row in rows:
        assert set(row) == ROW_KEYS
        assert isinstance(row["name"], str) and isinstance(row["unit"], str)
        if row["ratio"] is None:
            assert "unavailable" in row["name"]
            continue
        assert row["ours"] > 0 and row["peer"] > 0
        assert math.isclose(row["ratio"], row["ours"] / row["peer"])


def test_every_comparison_of_the_issue_has_a_row_that_names_its_direction(rows):
    names = [row["name"] for row in rows]
    for comparison in COMPARISONS:
        assert any(comparison in name for name in names), comparison
    for row in rows:
        if row["ratio"] is not None:
            assert "higher is better" in row["name"] or "lower is better" in row["name"]


def test_the_decoding_row_reports_identical_outputs(rows):
    (decoding,) = [row for row in rows if "KV cache" in row["name"]]
    assert "identical outputs" in decoding["name"]


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message of a machine without")
def test_asking_for_a_gpu_where_there_is_none_is_one_clear_error(tmp_path):
    command = python_module("transformer_lab.bench", "--quick", "--device", "cuda")
    done = run_command_here(command, tmp_path)  # refused before any work: run here
    assert done.returncode == 2
    assert done.stderr.strip().endswith(
        "error: --device cuda: torch sees no CUDA GPU here; allowed on this machine: cpu"
    )
