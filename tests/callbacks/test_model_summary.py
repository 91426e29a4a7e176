"""The model's size in one line (callbacks/model_summary.py) instead of Lightning's table."""

from transformer_lab.callbacks.model_summary import summary_line


def test_the_line_gives_the_trainable_parameters_and_the_flops_of_the_example():
    assert summary_line(44_288, 44_288, 331_000) == (
        "model: 44.3 K trainable parameters, 331 K FLOPs a forward of the example batch"
    )


def test_frozen_parameters_are_counted_apart_and_uncounted_flops_left_out():
    assert summary_line(2_000_000, 1_500_000, 0) == ("model: 1.5 M trainable parameters (of 2.0 M)")
