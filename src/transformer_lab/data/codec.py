"""How a task's token ids read as text, and text as token ids: what the sample tables, the
attention maps' axis labels, BLEU and ``tlab-generate`` show and read.

Every datamodule has one codec for its sources and one for its targets (the same one where
they share a vocabulary). Three kinds:

- :class:`NumberCodec`: the synthetic tasks (reverse, copy, sort), whose words are the
  content ids themselves, printed as numbers (``5 7 9``).
- :class:`WordCodec`: a fixed list of words (the research tasks: digits, keys and values,
  SCAN's commands and actions), one id each, written space-separated.
- :class:`~transformer_lab.data.tokenizer.TokenizerCodec`: a Hugging Face tokenizer learnt
  from the training file (``data=pairs``).

``encode`` gives content ids only (no EOS); ``decode`` reads up to EOS and drops the special
tokens; ``token`` labels one id, the specials by :data:`~transformer_lab.tokens.SPECIAL_NAMES`.
"""

from collections.abc import Iterable, Sequence
from typing import Protocol

from transformer_lab.tokens import EOS, FIRST_CONTENT, SPECIAL_NAMES, detokenize


class Codec(Protocol):
    vocab_size: int  # every id, the specials included

    def encode(self, text: str) -> list[int]:
        """Content ids of ``text``; ValueError naming what cannot be read."""

    def decode(self, ids: Iterable[int]) -> str:
        """The text of ``ids`` up to (not including) EOS, special tokens dropped."""

    def token(self, id_: int) -> str:
        """One id as an axis label."""


def content_until_eos(ids: Iterable[int]) -> list[int]:
    """The ids before the first EOS that are neither PAD nor BOS."""
    kept = []
    for i in ids:
        if i == EOS:
            break
        if i >= FIRST_CONTENT:
            kept.append(int(i))
    return kept


class NumberCodec:
    """Content ids written as numbers: the synthetic tasks' words, as the sample tables
    print them (:func:`~transformer_lab.tokens.detokenize`)."""

    def __init__(self, vocab_size: int):
        self.vocab_size = vocab_size

    def encode(self, text: str) -> list[int]:
        ids = []
        for word in text.split():
            if not word.isdigit() or not FIRST_CONTENT <= int(word) < self.vocab_size:
                raise ValueError(
                    f"{word!r} is not a token of this task; allowed: the numbers "
                    f"{FIRST_CONTENT}..{self.vocab_size - 1}"
                )
            ids.append(int(word))
        return ids

    def decode(self, ids: Iterable[int]) -> str:
        return detokenize(ids)

    def token(self, id_: int) -> str:
        return SPECIAL_NAMES.get(int(id_), str(int(id_)))


class WordCodec:
    """A fixed vocabulary of words: ``words[i]`` is id ``FIRST_CONTENT + i``; text is the
    words separated by spaces."""

    def __init__(self, words: Sequence[str]):
        if len(set(words)) != len(words):
            raise ValueError(f"the words repeat: {list(words)}")
        self.words = tuple(words)
        self.ids = {word: FIRST_CONTENT + i for i, word in enumerate(self.words)}
        self.vocab_size = FIRST_CONTENT + len(self.words)

    def encode(self, text: str) -> list[int]:
        unknown = [word for word in text.split() if word not in self.ids]
        if unknown:
            raise ValueError(
                f"{unknown[0]!r} is not a word of this task; allowed: {' '.join(self.words)}"
            )
        return [self.ids[word] for word in text.split()]

    def encode_words(self, words: Iterable[str]) -> list[int]:
        """The ids of words known to be in the vocabulary (the task's own examples)."""
        return [self.ids[word] for word in words]

    def decode(self, ids: Iterable[int]) -> str:
        return " ".join(self.token(i) for i in content_until_eos(ids))

    def token(self, id_: int) -> str:
        """The word of ``id_``; ``<id>`` for an id past the words (a model whose vocabulary
        was pinned larger than the task's can emit one)."""
        id_ = int(id_)
        if id_ in SPECIAL_NAMES:
            return SPECIAL_NAMES[id_]
        index = id_ - FIRST_CONTENT
        return self.words[index] if index < len(self.words) else f"<{id_}>"
