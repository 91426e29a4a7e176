"""Beam search and sampling: their equivalences with greedy and with cache-free decoding,
and a hand-built model on which greedy decoding is provably not the most likely answer."""

import math

import pytest
import torch

from transformer_lab.model.decoding import beam_search, sample
from transformer_lab.tokens import BOS, EOS, PAD

MAX_NEW = 8
A, B, C, D, E = 3, 4, 5, 6, 7  # the content tokens of the bigram model


@pytest.fixture
def src(batch) -> torch.Tensor:
    """Three source rows of lengths 7, 4, 2 (right padded)."""
    return batch[0]


def log_prob(model, src: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """Teacher-forced ``log p(out[:, 1:] | src)`` per row ``[B]``, PAD after EOS ignored."""
    with torch.no_grad():
        logits = model(src, out[:, :-1]).double()
        logits[..., [PAD, BOS]] = float("-inf")  # as every search rules them out
        token_log_probs = logits.log_softmax(-1).gather(-1, out[:, 1:, None])[..., 0]
    return token_log_probs.masked_fill(out[:, 1:] == PAD, 0.0).sum(-1)


def bigram_model(make_model, next_token_probs: dict[int, dict[int, float]]):
    """A real Seq2SeqTransformer whose next-token distribution depends on the last token only.

    Pre-norm without positional encoding, and with every decoder sublayer's output
    projection zeroed, leaves the decoder's residual stream at ``sqrt(d) * embed(token)``.
    Token i embeds as ``e_2i - e_2i+1`` (mean 0), which the final LayerNorm maps to
    ``sqrt(d/2) (e_2i - e_2i+1)``; the output columns 2i then hold row i's log-probabilities
    (tokens not listed share what is left), so ``p(next | last)`` is the table, exactly up
    to the LayerNorm's epsilon.
    """
    vocab = 8
    model = make_model("pre", "none", tgt_vocab_size=vocab, d_model=2 * vocab)
    with torch.no_grad():
        for layer in model.decoder_layers:
            for projection in (layer.self_attn.out_proj, layer.cross_attn.out_proj, layer.ffn.w2):
                projection.weight.zero_()
                projection.bias.zero_()
        model.tgt_embed.weight.zero_()
        model.output.weight.zero_()
        model.output.bias.zero_()
        for token in range(vocab):
            model.tgt_embed.weight[token, 2 * token] = 1.0
            model.tgt_embed.weight[token, 2 * token + 1] = -1.0
            probs = next_token_probs.get(token, {})
            rest = (1.0 - sum(probs.values())) / (vocab - 2 - len(probs))  # PAD, BOS excluded
            row = [probs.get(t, rest) if t >= EOS else 1e-9 for t in range(vocab)]
            model.output.weight[:, 2 * token] = torch.tensor(row).log() / math.sqrt(vocab)
    return model


def test_beam_search_beats_greedy_where_the_greedy_path_is_provably_suboptimal(make_model):
    # greedy takes A (0.5), but every answer through A is below 0.5 * 0.32 = 0.16 (0.32 is
    # the likeliest token after A), while B (0.4) then EOS (0.95) is 0.38
    model = bigram_model(
        make_model,
        {
            BOS: {A: 0.5, B: 0.4},
            A: {C: 0.32, D: 0.3, E: 0.28},
            B: {EOS: 0.95},
            C: {EOS: 0.9},
            D: {EOS: 0.9},
            E: {EOS: 0.9},
        },
    )
    src = torch.tensor([[A, B, PAD], [C, D, E]])  # the decoder ignores the source here
    greedy = model.generate(src, max_new_tokens=MAX_NEW)
    beam = beam_search(model, src, beam_size=2, max_new_tokens=MAX_NEW)
    assert greedy.tolist() == [[BOS, A, C, EOS]] * 2
    assert beam.tolist() == [[BOS, B, EOS]] * 2
    probs = [log_prob(model, src, out).exp().tolist() for out in (greedy, beam)]
    assert probs == [
        pytest.approx([0.5 * 0.32 * 0.9] * 2, rel=1e-4),
        pytest.approx([0.38] * 2, rel=1e-4),
    ]


def test_length_penalty_turns_the_choice_from_the_short_to_the_long_hypothesis(make_model):
    # B EOS: 0.44 * 0.95 = 0.418 (2 tokens); A C EOS: 0.46 * 0.95 * 0.95 = 0.415 (3 tokens).
    # alpha 0 ranks by log p: B EOS. alpha 1 divides by (5 + n) / 6:
    # ln 0.418 / (7/6) = -0.748 < ln 0.415 / (8/6) = -0.659, so A C EOS.
    model = bigram_model(
        make_model, {BOS: {A: 0.46, B: 0.44}, A: {C: 0.95}, B: {EOS: 0.95}, C: {EOS: 0.95}}
    )
    src = torch.tensor([[A, B]])
    search = dict(beam_size=2, max_new_tokens=MAX_NEW)
    assert beam_search(model, src, length_penalty=0.0, **search).tolist() == [[BOS, B, EOS]]
    assert beam_search(model, src, length_penalty=1.0, **search).tolist() == [[BOS, A, C, EOS]]


def test_beam_search_of_a_batch_equals_searching_each_source_alone(make_model, src):
    model = make_model("pre", "rotary")
    with torch.no_grad():
        model.output.bias[EOS] += 2.0
    together = beam_search(model, src, beam_size=3, max_new_tokens=MAX_NEW)
    for row, alone in zip(together, src, strict=True):
        single = beam_search(model, alone[None], beam_size=3, max_new_tokens=MAX_NEW)[0]
        assert row[: single.size(0)].tolist() == single.tolist()
        assert (row[single.size(0) :] == PAD).all()


def test_sampling_with_top_k_1_is_greedy(make_model, norm, pos_encoding, src):
    model = make_model(norm, pos_encoding)
    greedy = model.generate(src, max_new_tokens=MAX_NEW)
    assert torch.equal(sample(model, src, MAX_NEW, temperature=2.0, top_k=1, seed=3), greedy)


def test_sampling_is_a_function_of_the_seed_alone(make_model, src):
    model = make_model("pre", "alibi")
    src = src.repeat(4, 1)  # [12, 7]
    first = sample(model, src, MAX_NEW, seed=0)
    torch.manual_seed(123)  # the global RNG does not matter when a seed is given
    assert torch.equal(sample(model, src, MAX_NEW, seed=0), first)
    assert not torch.equal(sample(model, src, MAX_NEW, seed=1), first)


@pytest.mark.parametrize(("temperature", "top_k"), [(1.0, 0), (0.5, 0), (2.0, 3)])
def test_first_sampled_tokens_follow_the_tempered_top_k_distribution(
    make_model, temperature, top_k
):
    model = make_model()
    src = torch.tensor([[3, 4, 5, 6]])
    with torch.no_grad():
        logits = model.decode(torch.tensor([[BOS]]), model.encode(src), src)[0, -1]
    logits[[PAD, BOS]] = float("-inf")
    logits = logits / temperature
    if top_k:
        logits[logits < logits.topk(top_k).values[-1]] = float("-inf")
    expected = logits.softmax(-1)
    draws = sample(model, src.repeat(4000, 1), 1, temperature, top_k, seed=0)[:, 1]  # [4000]
    observed = torch.bincount(draws, minlength=expected.numel()).double() / 4000
    assert (observed[expected == 0] == 0).all()  # never outside the top k, never PAD/BOS
    torch.testing.assert_close(observed, expected, atol=0.025, rtol=0)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m, s: beam_search(m, s, beam_size=0), r"beam_size must be between 1 and 8.*got 0"),
        (lambda m, s: beam_search(m, s, beam_size=9), r"beam_size must be between 1 and 8.*got 9"),
        (lambda m, s: beam_search(m, s, length_penalty=-0.5), r"length_penalty must be >= 0"),
        (lambda m, s: beam_search(m, s, max_new_tokens=0), r"max_new_tokens must be >= 1"),
        (lambda m, s: beam_search(m, s, max_new_tokens=17), r"max_len=16"),
        (lambda m, s: sample(m, s, temperature=0.0), r"temperature must be > 0; got 0.0"),
        (lambda m, s: sample(m, s, top_k=-1), r"top_k must be >= 0 \(0 keeps every token\)"),
    ],
    ids=["beam0", "beam9", "penalty", "max_new", "max_len", "temperature", "top_k"],
)
def test_bad_decoding_settings_are_named_in_the_error(make_model, src, call, message):
    with pytest.raises(ValueError, match=message):
        call(make_model(), src)
