"""How each task's ids read as text and text as ids: the numbers of the synthetic tasks, the
fixed words of the research tasks."""

import pytest

from transformer_lab.data.codec import NumberCodec, WordCodec
from transformer_lab.tokens import BOS, EOS, PAD


def test_numbers_read_as_the_sample_tables_print_them():
    codec = NumberCodec(16)
    assert codec.encode("5 7 15") == [5, 7, 15]
    assert codec.decode([BOS, 5, 7, EOS, 9, PAD]) == "5 7"
    assert [codec.token(i) for i in (PAD, BOS, EOS, 12)] == ["<pad>", "<bos>", "<eos>", "12"]


@pytest.mark.parametrize("text", ["5 16", "5 2", "5 x"])
def test_a_number_outside_the_tasks_words_is_refused_with_the_range(text):
    with pytest.raises(
        ValueError, match=r"is not a token of this task; allowed: the numbers 3\.\.15"
    ):
        NumberCodec(16).encode(text)


def test_words_get_ids_in_order_after_the_specials():
    codec = WordCodec(["jump", "twice"])
    assert codec.vocab_size == 5
    assert codec.encode("jump twice twice") == [3, 4, 4]
    assert codec.decode([3, 4, EOS, 3]) == "jump twice"
    assert codec.token(4) == "twice" and codec.token(EOS) == "<eos>"
    assert codec.token(7) == "<7>"  # a model pinned to a larger vocabulary can emit one


def test_an_unknown_word_is_refused_naming_the_words_there_are():
    with pytest.raises(ValueError, match="'hop' is not a word of this task; allowed: jump twice"):
        WordCodec(["jump", "twice"]).encode("hop twice")
