"""The tokenizers data=pairs learns (Hugging Face tokenizers): the project's special ids
first, and text back as it was."""

import pytest
from tokenizers import Tokenizer

from transformer_lab.data.tokenizer import TokenizerCodec, train_tokenizer
from transformer_lab.tokens import BOS, EOS, PAD

TRAIN = [
    "the cat sat on the mat",
    "a naïve café, twice",
    "the dog ran  under the old house",
    "line one\nline two",
] * 20
UNSEEN = ["the mat sat on the cat", "café  cat", "house dog the"]  # seen characters only


@pytest.mark.parametrize("kind", ["char", "word", "bpe"])
def test_the_special_ids_come_first(kind):
    tokenizer = train_tokenizer(kind, TRAIN, 60 if kind == "bpe" else None)
    ids = [tokenizer.token_to_id(t) for t in ("<pad>", "<bos>", "<eos>", "<unk>")]
    assert ids == [PAD, BOS, EOS, 3]


@pytest.mark.parametrize("text", TRAIN[:4] + UNSEEN)
def test_bpe_round_trips_text_of_the_characters_it_learnt(text):
    codec = TokenizerCodec(train_tokenizer("bpe", TRAIN, 60))
    ids = codec.encode(text)
    assert min(ids) > EOS  # content only: no specials added
    assert codec.decode([BOS, *ids, EOS, PAD]) == text


def test_bpe_learns_no_more_than_its_vocabulary_size_and_merges_words():
    codec = TokenizerCodec(train_tokenizer("bpe", TRAIN, 60))
    assert codec.vocab_size == 60
    assert len(codec.encode("the cat sat on the mat")) < len("the cat sat on the mat")


@pytest.mark.parametrize("text", TRAIN[:4] + UNSEEN)
def test_characters_round_trip_spaces_and_newlines_included(text):
    codec = TokenizerCodec(train_tokenizer("char", TRAIN, None))
    assert len(codec.encode(text)) == len(text)
    assert codec.decode(codec.encode(text)) == text


def test_words_split_at_whitespace_and_join_with_one_space():
    codec = TokenizerCodec(train_tokenizer("word", TRAIN, None))
    assert codec.decode(codec.encode("the dog ran  under")) == "the dog ran under"
    assert codec.token(codec.encode("dog")[0]) == "dog"


def test_an_unseen_symbol_is_unk_and_stays_visible():
    codec = TokenizerCodec(train_tokenizer("word", TRAIN, None))
    assert codec.decode(codec.encode("the zebra")) == "the <unk>"


def test_a_word_vocabulary_size_keeps_the_most_frequent():
    codec = TokenizerCodec(train_tokenizer("word", ["a a a b b c"], 6))
    assert codec.vocab_size == 6  # four specials, a and b
    assert codec.decode(codec.encode("a b c")) == "a b <unk>"


def test_the_json_rebuilds_the_same_tokenizer(tmp_path):
    codec = TokenizerCodec(train_tokenizer("bpe", TRAIN, 60))
    again = TokenizerCodec.from_json(codec.to_json())
    assert [again.encode(t) for t in UNSEEN] == [codec.encode(t) for t in UNSEEN]
    (tmp_path / "tokenizer.json").write_text(codec.to_json())
    from_file = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert from_file.encode(UNSEEN[0], add_special_tokens=False).ids == codec.encode(UNSEEN[0])
