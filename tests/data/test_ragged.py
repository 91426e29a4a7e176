"""Token ids of different lengths held flat: padded into the rows a split stores exactly as
lists of ids would be, filtered and joined without losing the order."""

import numpy as np
import torch

from transformer_lab.data.ragged import Ragged
from transformer_lab.tokens import BOS, EOS, PAD


def test_rows_put_each_sequence_behind_first_and_before_last_right_padded():
    ragged = Ragged.of([[5, 6, 7], [8], []])
    assert torch.equal(
        ragged.rows(BOS, None),
        torch.tensor([[BOS, 5, 6, 7], [BOS, 8, PAD, PAD], [BOS, PAD, PAD, PAD]]),
    )
    assert torch.equal(
        ragged.rows(None, EOS),
        torch.tensor([[5, 6, 7, EOS], [8, EOS, PAD, PAD], [EOS, PAD, PAD, PAD]]),
    )


def test_where_and_joined_keep_the_chosen_sequences_in_order():
    first, second = Ragged.of([[3], [4, 4], [5, 5, 5]]), Ragged.of([[6, 6]])
    kept = first.where(np.array([True, False, True]))
    joined = Ragged.joined([kept, second])
    assert joined.lengths.tolist() == [1, 3, 2] and joined.ids.tolist() == [3, 5, 5, 5, 6, 6]
    assert joined.longest() == 3 and len(Ragged.joined([])) == 0
