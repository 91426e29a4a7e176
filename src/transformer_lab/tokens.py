"""The token ids every part of the project agrees on.

Special tokens come first so that a task's content tokens are simply ``FIRST_CONTENT ..
vocab_size - 1``; right padding with ``PAD`` is assumed throughout.
"""

PAD = 0
BOS = 1
EOS = 2
FIRST_CONTENT = 3
SPECIAL_NAMES = {PAD: "<pad>", BOS: "<bos>", EOS: "<eos>"}


def detokenize(ids) -> str:
    """Content ids as space-separated numbers, up to (not including) EOS; specials dropped."""
    words = []
    for i in ids:
        if i == EOS:
            break
        if i >= FIRST_CONTENT:
            words.append(str(int(i)))
    return " ".join(words)
