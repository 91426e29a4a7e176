"""How a sample generation becomes a row of the TensorBoard text table."""

from transformer_lab.callbacks.samples import sample_row, sample_table
from transformer_lab.tokens import EOS, PAD

SRC = [5, 6, 7, EOS]
TARGET = [7, 6, 5, EOS]


def test_a_correct_prediction_is_shown_plain():
    assert sample_row(SRC, TARGET, [7, 6, 5, EOS, PAD]) == (["5 6 7", "7 6 5", "7 6 5"], True)


def test_the_first_wrong_word_is_bold_and_the_rest_shown():
    assert sample_row(SRC, TARGET, [7, 9, 8, EOS]) == (["5 6 7", "7 6 5", "7 **9** 8"], False)


def test_an_early_end_is_marked_where_the_target_goes_on():
    assert sample_row(SRC, TARGET, [7, EOS, PAD, PAD])[0][2] == "7 **⟨end⟩**"


def test_a_word_past_the_targets_end_is_the_first_wrong_token():
    assert sample_row(SRC, TARGET, [7, 6, 5, 5])[0][2] == "7 6 5 **5**"


def test_a_prediction_cut_off_by_the_length_limit_is_marked():
    assert sample_row(SRC, TARGET, [7, 6])[0][2] == "7 6 **…**"


def test_the_table_counts_the_wrong_rows():
    rows = [sample_row(SRC, TARGET, [7, 9, 8, EOS]), sample_row(SRC, TARGET, TARGET)]
    table = sample_table(rows)
    assert table.splitlines()[0] == "1 of 2 wrong; the first wrong token is bold."
    assert table.splitlines()[-2:] == ["| 5 6 7 | 7 6 5 | 7 **9** 8 |", "| 5 6 7 | 7 6 5 | 7 6 5 |"]
