"""Hypotheses given on the command line (``hypotheses=[]`` for a narrowed sweep) are what a
sweep is judged by, not a hyper-parameter: HPARAMS leaves them out."""

from transformer_lab.runs.hparams import run_hparams


def test_hypotheses_on_the_command_line_are_no_hyper_parameter(compose_train):
    overrides = ["experiment=norm_comparison", "depth=6", "hypotheses=[]"]
    cfg = compose_train(overrides)
    assert list(cfg.hypotheses) == []
    params, overridden = run_hparams(cfg, overrides)
    assert overridden == {"experiment", "depth"}
    assert "hypotheses" not in params
