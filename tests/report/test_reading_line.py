"""On a terminal the report says what it reads while it works (a grid's report reads and
judges hundreds of jobs for a minute or more before its first output), and erases that line
before what it prints; elsewhere it prints nothing of the kind."""

import io
import sys

import pytest

from transformer_lab.report import main

from .conftest import hand_made_job


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def sweep(tmp_path):
    for seed in range(2):
        hand_made_job(tmp_path, {"model.norm": "pre", "seed": seed}, {"val/seq_acc": 0.9})
    return tmp_path


def test_on_a_terminal_the_line_says_how_many_jobs_are_read_and_is_erased_after(
    sweep, monkeypatch, capsys
):
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main([str(sweep)]) == 0
    assert terminal.getvalue() == f"report: reading the 2 jobs of {sweep} ...\r\033[K"
    assert capsys.readouterr().out.endswith(f"report: {sweep / 'report.md'}\n")


def test_an_error_on_a_terminal_is_its_one_line_after_the_erased_one(sweep, monkeypatch):
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main([str(sweep), "--target", "2"]) == 2
    reading, error = terminal.getvalue().split("\r\033[K")
    assert reading == f"report: reading the 2 jobs of {sweep} ..."
    assert error.startswith("error: --target=2") and error.count("\n") == 1, error


def test_elsewhere_the_report_prints_no_such_line(sweep, capsys):
    assert main([str(sweep), "--target", "2"]) == 2
    assert capsys.readouterr().err.startswith("error: --target=2")
