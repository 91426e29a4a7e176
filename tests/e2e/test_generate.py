"""tlab-generate on a synthetic task's checkpoint: inputs in the numbers the sample tables
print, the model's own greedy, beam and sampled outputs, and a bad line reported by its
number while the others are still decoded. The checkpoint is the small fixture of a reverse
run (tests/fixtures); nothing trains here."""

import io
import json
from pathlib import Path

import pytest
import torch

from transformer_lab.generate import cli
from transformer_lab.model.decoding import beam_search, sample
from transformer_lab.runs.checkpoint import load

CHECKPOINT = (
    Path(__file__).resolve().parents[1] / "fixtures" / "checkpoint_before_stage_folders.ckpt"
)
INPUTS = ["5 6 7", "3 4 5 6 7 8", "9 9 12"]


@pytest.fixture(scope="module")
def model():
    # as generate loads it: the settings added since the checkpoint take their old meaning
    return load(CHECKPOINT)[0].model


def run(monkeypatch, capsys, lines, *settings):
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines) + "\n"))
    status = 0
    try:
        cli([f"ckpt_path={CHECKPOINT}", *settings])
    except SystemExit as stop:
        status = stop.code
    out, err = capsys.readouterr()
    return status, out.splitlines(), [line for line in err.splitlines() if line.startswith("error")]


def as_text(ids) -> str:
    return " ".join(str(i) for i in ids[1:] if i > 2)  # BOS first; stop at EOS below


def decoded(out: torch.Tensor) -> list[str]:
    texts = []
    for row in out.tolist():
        row = row[: row.index(2) + 1] if 2 in row else row
        texts.append(as_text(row))
    return texts


def sources(lines):
    rows = [[*map(int, line.split()), 2] for line in lines]
    width = max(map(len, rows))
    return torch.tensor([row + [0] * (width - len(row)) for row in rows])


def test_greedy_outputs_are_the_models_own(monkeypatch, capsys, model):
    status, out, errors = run(monkeypatch, capsys, INPUTS)
    assert (status, errors) == (0, [])
    assert out == decoded(model.generate(sources(INPUTS), model.max_len))


def test_beam_and_sampling_outputs_are_the_searches_own(monkeypatch, capsys, model):
    _, out, _ = run(monkeypatch, capsys, INPUTS, "decoding=beam", "beam_size=3")
    assert out == decoded(beam_search(model, sources(INPUTS), 3, model.max_len))
    _, out, _ = run(monkeypatch, capsys, INPUTS, "decoding=sample", "seed=5", "top_k=4")
    alone = [
        sample(model, sources([line]), model.max_len, 1.0, 4, seed=5 + n)
        for n, line in enumerate(INPUTS, start=1)
    ]  # line n alone, from seed + n
    assert out == [decoded(one)[0] for one in alone]


def test_a_bad_line_is_reported_by_number_and_the_rest_decoded(monkeypatch, capsys, model):
    lines = ["5 6 7", "5 99 7", "", "3 4"]
    status, out, errors = run(monkeypatch, capsys, lines, "format=jsonl")
    assert status == 2
    assert errors == [
        "error: line 2: '99' is not a token of this task; allowed: the numbers 3..15",
        "error: line 3: no tokens (an empty line)",
    ]
    records = [json.loads(line) for line in out]
    assert [r["line"] for r in records] == [1, 2, 3, 4]
    assert [r["output"] for r in (records[0], records[3])] == decoded(
        model.generate(sources(["5 6 7", "3 4"]), model.max_len)
    )
    assert records[1] == {"line": 2, "input": "5 99 7", "error": errors[0].split(": ", 2)[2]}


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("decoding=nucleus", "error: decoding='nucleus': unknown; allowed: greedy, beam, sample"),
        ("temperature=0", "error: temperature=0: out of range; allowed: a number > 0"),
        (
            "max_new_tokens=65",
            "error: max_new_tokens=65: out of range; allowed: an integer in [1, 64]",
        ),
        (
            "input=/nowhere.txt",
            "error: input='/nowhere.txt': no such file; allowed: a file of inputs, or -",
        ),
    ],
)
def test_a_setting_that_cannot_decode_is_one_line_and_exit_2(monkeypatch, capsys, setting, message):
    if setting.startswith("temperature"):
        setting = f"decoding=sample {setting}"
    status, out, errors = run(monkeypatch, capsys, INPUTS, *setting.split())
    assert (status, out, errors) == (2, [], [message])
