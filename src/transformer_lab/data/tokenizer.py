"""The tokenizers ``data=pairs`` learns from its training file, with Hugging Face
``tokenizers``: characters, whitespace-separated words, or byte-pair encoding.

Every kind reserves the project's special ids first (``<pad>`` 0, ``<bos>`` 1, ``<eos>`` 2,
see :mod:`transformer_lab.tokens`), then ``<unk>`` 3 for what the training file never
showed, then what it learnt. A tokenizer is its JSON (``Tokenizer.to_str``): a string,
which the datamodule keeps among its settings, so that the checkpoint holds it, and which
``Tokenizer.from_file`` reads from the run folder's ``tokenizer*.json``.

- ``char``: every character a token (spaces and newlines too), joined back without
  separators.
- ``word``: the text split at whitespace, joined back with single spaces.
- ``bpe``: SentencePiece-style BPE: a space becomes ``▁`` at the start of the word that
  follows it, so the merges never cross words and decoding restores the spacing.

``vocab_size`` counts every id, the specials included: for ``bpe`` the size to learn
(fewer when the file has fewer distinct merges), for ``char`` and ``word`` the most
frequent symbols kept (None: all of them).
"""

from collections.abc import Iterable, Sequence

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

from transformer_lab.data.codec import content_until_eos
from transformer_lab.tokens import BOS, EOS, PAD, SPECIAL_NAMES

KINDS = ("char", "word", "bpe")
UNK = "<unk>"
SPECIALS = [SPECIAL_NAMES[PAD], SPECIAL_NAMES[BOS], SPECIAL_NAMES[EOS], UNK]  # ids 0, 1, 2, 3
EVERY_SYMBOL = 1 << 30  # a WordLevel vocabulary size that keeps every symbol seen


def train_tokenizer(kind: str, texts: Iterable[str], vocab_size: int | None) -> Tokenizer:
    """A ``kind`` tokenizer learnt from ``texts``."""
    if kind == "bpe":
        tokenizer = Tokenizer(models.BPE(unk_token=UNK))
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
        tokenizer.decoder = decoders.Metaspace()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size, special_tokens=SPECIALS, show_progress=False
        )
    else:
        tokenizer = Tokenizer(models.WordLevel(unk_token=UNK))
        if kind == "char":
            tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
            tokenizer.decoder = decoders.Fuse()  # no separator between characters
        else:
            tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
        trainer = trainers.WordLevelTrainer(
            vocab_size=vocab_size or EVERY_SYMBOL, special_tokens=SPECIALS, show_progress=False
        )
    tokenizer.train_from_iterator(texts, trainer)
    return tokenizer


class TokenizerCodec:
    """A Hugging Face tokenizer as the project's :class:`~transformer_lab.data.codec.Codec`."""

    def __init__(self, tokenizer: Tokenizer):
        self.tokenizer = tokenizer
        self.vocab_size = tokenizer.get_vocab_size()

    @classmethod
    def from_json(cls, text: str) -> "TokenizerCodec":
        return cls(Tokenizer.from_str(text))

    def to_json(self) -> str:
        return self.tokenizer.to_str()

    def encode(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=False).ids

    def unseen(self, text: str) -> list[str]:
        """The pieces of ``text`` the tokenizer reads as ``<unk>`` (the training file never
        showed them), each once, in order: a character for ``char`` and ``bpe``, a word for
        ``word``."""
        encoding = self.tokenizer.encode(text, add_special_tokens=False)
        unk = self.tokenizer.token_to_id(UNK)
        offsets = zip(encoding.ids, encoding.offsets, strict=True)
        pieces = [text[start:end] for i, (start, end) in offsets if i == unk]
        return list(dict.fromkeys(pieces))

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """:meth:`encode` of many texts at once (on every core: the Rust side threads)."""
        encodings = self.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [encoding.ids for encoding in encodings]

    def decode(self, ids: Iterable[int]) -> str:
        """``<unk>`` stays visible; ids past the vocabulary (a model pinned larger) are
        dropped."""
        kept = [i for i in content_until_eos(ids) if i < self.vocab_size]
        return self.tokenizer.decode(kept, skip_special_tokens=False)

    def token(self, id_: int) -> str:
        return self.tokenizer.id_to_token(int(id_)) or f"<{int(id_)}>"
