"""Sample tables and attention-map axes in the data's own tokens: words, characters or BPE
pieces instead of id numbers, a ``|`` of the data's text escaped for markdown."""

import torch

from transformer_lab.callbacks.attention_maps import attention_figure, token_labels
from transformer_lab.callbacks.plotting import to_image
from transformer_lab.callbacks.samples import sample_row
from transformer_lab.data.codec import WordCodec
from transformer_lab.tokens import BOS, EOS, PAD

COMMANDS = WordCodec(["jump", "twice", "a|b"])
ACTIONS = WordCodec(["I_JUMP", "I_WALK"])


def test_attention_axes_are_labelled_with_the_tokens():
    assert token_labels(torch.tensor([BOS, 3, 4, EOS]), COMMANDS.token) == [
        "<bos>",
        "jump",
        "twice",
        "<eos>",
    ]
    assert token_labels(torch.tensor([BOS, 3])) == ["<bos>", "3"]  # no codec: the numbers


def test_each_head_of_an_attention_map_names_its_keys_below_and_the_queries_once_beside():
    queries, keys = ["<bos>", "I_JUMP"], ["jump", "twice", "<eos>"]
    figure = attention_figure(torch.full((2, 2, 3), 1 / 3), queries, keys, "cross")
    to_image(figure)  # placed where the figure draws them
    (ax,) = figure.axes
    cells = ax.get_window_extent()
    texts = [t for t in ax.texts if not t.get_text().startswith("head")]
    below = [t.get_text() for t in texts if t.get_window_extent().y1 <= cells.y0]
    beside = [t.get_text() for t in texts if t.get_window_extent().x1 <= cells.x0]
    assert below == keys * 2 and beside == queries
    assert [t.get_text() for t in ax.texts if t not in texts] == ["head 0", "head 1"]


def test_a_sample_row_reads_source_and_target_in_their_own_vocabularies():
    row, correct = sample_row(
        [3, 4, EOS], [3, 3, EOS], [3, 4, EOS, PAD], COMMANDS.decode, ACTIONS.decode
    )
    assert (row, correct) == (["jump twice", "I_JUMP I_JUMP", "I_JUMP **I_WALK**"], False)


def test_a_bar_in_the_datas_text_is_escaped_in_the_markdown_table():
    row, _ = sample_row([5, EOS], [3, EOS], [3, EOS], COMMANDS.decode, ACTIONS.decode)
    assert row[0] == "a\\|b"
