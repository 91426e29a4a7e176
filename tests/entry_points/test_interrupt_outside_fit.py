"""Ctrl-C outside fit (between a sweep's jobs, while a run sets up or tests) is one line
and exit status 130, not Python's traceback: no trained step is lost there."""

import sys

import pytest

from transformer_lab import train


def test_ctrl_c_outside_fit_is_one_line_and_exit_130(monkeypatch, capsys):
    def interrupted_set_up():
        raise KeyboardInterrupt

    monkeypatch.setattr(sys, "argv", ["train", "experiment=smoke"])
    monkeypatch.setattr(train, "main", interrupted_set_up)
    with pytest.raises(SystemExit) as stopped:
        train.cli()
    assert stopped.value.code == 130
    err = capsys.readouterr().err
    assert err == train.OUTSIDE_FIT_INTERRUPT + "\n"
    assert "last.ckpt" in err and "Traceback" not in err
