"""Oracle-length decoding: greedy decoding told each row's length ends every row exactly
there, whatever the model would have decided about EOS."""

import pytest
import torch
from torch import nn

from transformer_lab.model.decoding import greedy, greedy_to_length
from transformer_lab.tokens import BOS, EOS, PAD

from .conftest import tiny_model

VOCAB = 10


class Scripted(nn.Module):
    """A stand-in for the network: at target position ``t`` row ``b`` scores ``first[b][t]``
    2 and ``second[b][t]`` 1, every other token 0 (it ignores the tokens fed so far)."""

    def __init__(self, first: list[list[int]], second: list[list[int]]):
        super().__init__()
        self.first, self.second = torch.tensor(first), torch.tensor(second)

    def check_positions(self, end: int, what: str) -> None:
        pass

    def encode(self, src: torch.Tensor) -> torch.Tensor:
        return torch.zeros(src.size(0), src.size(1), 1)

    def decode(self, tgt_in, memory, src, cache=None) -> torch.Tensor:
        t = tgt_in.size(1)
        logits = torch.zeros(tgt_in.size(0), t, VOCAB)  # [B, T, V]
        logits.scatter_(2, self.first[:, :t, None], 2.0)
        logits.scatter_(2, self.second[:, :t, None], 1.0)
        return logits


# row 0 would end too early (EOS first at step 1), row 1 never, row 2 at once
MODEL = Scripted(
    first=[[5, EOS, 7, 8, 9], [4, 4, 4, 4, 4], [EOS, 3, 3, 3, 3]],
    second=[[6, 6, 6, 6, 6], [3, 3, 3, 3, 3], [5, 5, 5, 5, 5]],
)
SRC = torch.tensor([[3, 3, EOS], [3, 3, EOS], [3, 3, EOS]])


def test_eos_is_ruled_out_before_the_given_length_and_forced_at_it():
    out = greedy_to_length(MODEL, SRC, torch.tensor([3, 2, 1]), use_cache=False)
    assert out.tolist() == [
        [BOS, 5, 6, 7, EOS],  # EOS ruled out at step 1: the runner-up 6 instead
        [BOS, 4, 4, EOS, PAD],  # EOS forced after 2 tokens
        [BOS, 5, EOS, PAD, PAD],  # EOS ruled out at step 0
    ]
    free = greedy(MODEL, SRC, max_new_tokens=4, use_cache=False)
    assert free.tolist() == [
        [BOS, 5, EOS, PAD, PAD],
        [BOS, 4, 4, 4, 4],
        [BOS, EOS, PAD, PAD, PAD],
    ]


def test_length_zero_ends_at_once_and_the_output_is_two_plus_the_longest():
    out = greedy_to_length(MODEL, SRC, torch.tensor([0, 4, 0]), use_cache=False)
    assert out.tolist() == [
        [BOS, EOS, PAD, PAD, PAD, PAD],
        [BOS, 4, 4, 4, 4, EOS],
        [BOS, EOS, PAD, PAD, PAD, PAD],
    ]


def test_a_real_model_decodes_as_greedy_up_to_the_given_length_then_ends(batch):
    """Where greedy ended by itself the oracle of its own length changes nothing; where it
    did not, the oracle keeps greedy's tokens and ends after the given number."""
    model = tiny_model("post", "sinusoidal")
    src, _ = batch
    free = greedy(model, src, max_new_tokens=8)
    ended = (free == EOS).any(1)  # [B]
    assert ended.tolist() == [False, True, False]  # row 1 ends after 5 tokens
    lengths = torch.where(ended, (free == EOS).int().argmax(1) - 1, 6)  # [B] tokens before EOS
    forced = greedy_to_length(model, src, lengths)
    assert forced.shape == (3, 8)
    for row, n in enumerate(lengths.tolist()):
        assert torch.equal(forced[row, : n + 1], free[row, : n + 1])
        assert forced[row, n + 1] == EOS and (forced[row, n + 2 :] == PAD).all()
    assert torch.equal(forced[1], free[1, :8])
    assert torch.equal(greedy_to_length(model, src, lengths, use_cache=False), forced)


@pytest.mark.parametrize("lengths", [[1, 2], [1, -1, 2], [[1, 2, 3]]])
def test_lengths_that_do_not_fit_the_batch_are_refused(lengths):
    with pytest.raises(ValueError, match=r"lengths must be \[B=3\] token counts >= 0"):
        greedy_to_length(MODEL, SRC, torch.tensor(lengths))
