"""Turning a trained model into token sequences: greedy, sampling and beam search.

Every search starts from BOS, never emits PAD or BOS, ends a row at its EOS (kept) or at
``max_new_tokens``, and returns ``[B, <= 1 + max_new_tokens]`` token ids with PAD after
EOS -- the format of :meth:`Seq2SeqTransformer.generate`, which is :func:`greedy`.
:func:`greedy_to_length` is greedy decoding told each row's length (oracle length), so
the tokens it gets right are scored apart from the decision where to end.

With ``use_cache`` a step feeds only the newest token and reuses the decoder cache
(self-attention K/V per layer, the memory's cross-attention K/V computed once, absolute
positions carried on); without it every step recomputes the whole prefix. The two give
the same tokens (tested for every norm and positional encoding); the second exists to
prove the first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from transformer_lab.tokens import BOS, EOS, PAD

if TYPE_CHECKING:
    from transformer_lab.model.transformer import DecoderCache, Seq2SeqTransformer


@contextmanager
def _decoding(model: Seq2SeqTransformer, max_new_tokens: int) -> Iterator:
    """Check the length, then decode without gradients in eval mode; restore the mode."""
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be >= 1; got {max_new_tokens}")
    # the last generated token is never fed back, so the decoder sees <= max_new_tokens
    model.check_positions(max_new_tokens, "generation (BOS + max_new_tokens - 1)")
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            yield
    finally:
        model.train(was_training)


def _next_logits(
    model: Seq2SeqTransformer,
    tokens: torch.Tensor,
    memory: torch.Tensor,
    src: torch.Tensor,
    cache: DecoderCache | None,
) -> torch.Tensor:
    """Logits ``[N, V]`` of the token after ``tokens [N, t]``, with PAD and BOS ruled out."""
    step_in = tokens if cache is None else tokens[:, -1:]  # the cache holds the rest
    logits = model.decode(step_in, memory, src, cache=cache)[:, -1]
    logits[:, [PAD, BOS]] = float("-inf")
    return logits


def _token_by_token(
    model: Seq2SeqTransformer,
    src: torch.Tensor,
    max_new_tokens: int,
    use_cache: bool,
    choose: Callable[[torch.Tensor, int], torch.Tensor],
) -> torch.Tensor:
    """Extend each row by ``choose(logits [B, V], step) -> [B]`` until every row has ended;
    ``step`` counts the generated tokens before this one.

    Finished rows are padded with PAD while the others go on.
    """
    with _decoding(model, max_new_tokens):
        memory = model.encode(src)  # [B, S, D]
        out = torch.full((src.size(0), 1), BOS, dtype=torch.long, device=src.device)
        finished = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
        cache = model.new_cache() if use_cache else None
        for step in range(max_new_tokens):
            token = choose(_next_logits(model, out, memory, src, cache), step)  # [B]
            token = token.masked_fill(finished, PAD)
            out = torch.cat((out, token[:, None]), dim=1)
            finished |= token == EOS
            if bool(finished.all()):
                break
        return out


def greedy(
    model: Seq2SeqTransformer, src: torch.Tensor, max_new_tokens: int = 32, use_cache: bool = True
) -> torch.Tensor:
    """The most likely token at every step."""
    return _token_by_token(
        model, src, max_new_tokens, use_cache, lambda logits, _: logits.argmax(-1)
    )


def greedy_to_length(
    model: Seq2SeqTransformer, src: torch.Tensor, lengths: torch.Tensor, use_cache: bool = True
) -> torch.Tensor:
    """Greedy decoding forced to ``lengths [B]`` tokens before EOS -> ``[B, 2 + max(lengths)]``.

    Oracle-length decoding: row ``b`` may not end (EOS is ruled out) before its
    ``lengths[b]`` tokens and ends (EOS is forced) right after them, each token otherwise
    the most likely one. Given the target's length, the tokens a model gets right at each
    position, past the training lengths too, no longer depend on whether it would have
    ended there: exact match and token accuracy by position under oracle length tell a
    position failure from an end-of-sequence one.
    """
    if lengths.dim() != 1 or lengths.size(0) != src.size(0) or bool((lengths < 0).any()):
        raise ValueError(
            f"lengths must be [B={src.size(0)}] token counts >= 0; got {lengths.tolist()}"
        )

    def choose(logits: torch.Tensor, step: int) -> torch.Tensor:
        may_end = lengths <= step  # [B] (only == step: the rows past it have ended)
        logits[:, EOS] = logits[:, EOS].masked_fill(~may_end, float("-inf"))
        return torch.where(may_end, EOS, logits.argmax(-1))

    return _token_by_token(model, src, int(lengths.max()) + 1, use_cache, choose)


def sample(
    model: Seq2SeqTransformer,
    src: torch.Tensor,
    max_new_tokens: int = 32,
    temperature: float = 1.0,
    top_k: int = 0,
    seed: int | None = None,
    use_cache: bool = True,
) -> torch.Tensor:
    """Draw every token from ``softmax(logits / temperature)`` over the ``top_k`` best.

    ``top_k=0`` keeps every token and ``top_k=1`` is greedy; a temperature below 1
    sharpens the distribution, above 1 flattens it. With a ``seed`` the draws come from a
    generator of their own, so the same seed gives the same samples whatever else used
    the global RNG; ``seed=None`` draws from the global RNG.
    """
    if not temperature > 0:
        raise ValueError(
            f"temperature must be > 0; got {temperature} (for the most likely token use "
            "greedy decoding or top_k=1)"
        )
    if top_k < 0:
        raise ValueError(f"top_k must be >= 0 (0 keeps every token); got {top_k}")
    generator = None if seed is None else torch.Generator(src.device).manual_seed(seed)

    def choose(logits: torch.Tensor, step: int) -> torch.Tensor:
        logits = logits / temperature  # [B, V]
        if top_k:
            kth = logits.topk(min(top_k, logits.size(-1)), dim=-1).values[:, -1:]  # [B, 1]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        return torch.multinomial(logits.softmax(-1), 1, generator=generator).squeeze(1)

    return _token_by_token(model, src, max_new_tokens, use_cache, choose)


def _length_penalty(length: int, alpha: float) -> float:
    """GNMT's ``((5 + length) / 6) ** alpha`` (Wu et al., 2016)."""
    return ((5 + length) / 6) ** alpha


def check_beam_search(model: Seq2SeqTransformer, beam_size: int, length_penalty: float) -> None:
    """Raise a ValueError naming the setting unless :func:`beam_search` can run with it."""
    vocab = model.output.out_features
    if not 1 <= beam_size <= vocab - 3:
        raise ValueError(
            f"beam_size must be between 1 and {vocab - 3} (the tokens a hypothesis can "
            f"continue with: the {vocab}-token target vocabulary less PAD, BOS, EOS); "
            f"got {beam_size}"
        )
    if not length_penalty >= 0:
        raise ValueError(
            f"length_penalty must be >= 0 (0 ranks by log-probability alone; larger values "
            f"favour longer outputs); got {length_penalty}"
        )


@dataclass
class _Beams:
    """Each source's ``K`` live hypotheses: ``tokens [B*K, t]`` from BOS (a source's beams
    are adjacent rows), their log-probabilities ``scores [B, K]``, and the decoder cache,
    which follows the hypotheses as they are reordered."""

    tokens: torch.Tensor
    scores: torch.Tensor
    cache: DecoderCache | None

    @classmethod
    def start(cls, batch: int, k: int, memory: torch.Tensor, cache: DecoderCache | None):
        """Every beam starts as the same BOS, so only beam 0 may be extended at first."""
        tokens = torch.full((batch * k, 1), BOS, dtype=torch.long, device=memory.device)
        scores = torch.full((batch, k), float("-inf"), dtype=memory.dtype, device=memory.device)
        scores[:, 0] = 0.0
        return cls(tokens, scores, cache)

    def rows(self, beam: torch.Tensor) -> torch.Tensor:
        """``beam [B, n]``, a beam number per source -> ``[B*n]`` rows of :attr:`tokens`."""
        first = torch.arange(beam.size(0), device=beam.device)[:, None] * self.scores.size(1)
        return (first + beam).flatten()

    def advance(self, top: torch.Tensor, beam: torch.Tensor, token: torch.Tensor) -> None:
        """Keep the K best candidates ``[B, 2K]`` that do not end in EOS."""
        k = self.scores.size(1)
        self.scores, keep = top.masked_fill(token == EOS, float("-inf")).topk(k, dim=1)
        rows = self.rows(beam.gather(1, keep))  # [B*K] the beams they extend
        self.tokens = torch.cat((self.tokens[rows], token.gather(1, keep).flatten()[:, None]), 1)
        if self.cache is not None:
            self.cache.reorder(rows)


@dataclass
class _Best:
    """Each source's best hypothesis so far: ``tokens [B, 1 + max_new_tokens]`` from BOS,
    PAD after its end, and its length-penalised ``score [B]`` (-inf while there is none)."""

    tokens: torch.Tensor
    score: torch.Tensor

    @classmethod
    def none(cls, batch: int, max_new_tokens: int, memory: torch.Tensor):
        tokens = torch.full((batch, 1 + max_new_tokens), PAD, dtype=torch.long)
        score = torch.full((batch,), float("-inf"), dtype=memory.dtype)
        return cls(tokens.to(memory.device), score.to(memory.device))

    def offer(self, tokens: torch.Tensor, score: torch.Tensor) -> None:
        """Keep ``tokens [B, L]`` for the sources where ``score [B]`` beats the best."""
        better = score > self.score  # [B]
        self.tokens[better, : tokens.size(1)] = tokens[better]
        self.score = torch.where(better, score, self.score)


def _top_candidates(
    scores: torch.Tensor, log_probs: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The ``2K`` best one-token extensions of each source's ``K`` beams.

    ``scores [B, K]`` and ``log_probs [B*K, V]`` -> their scores, the beam each extends
    and its token, each ``[B, 2K]``. The top 2K hold at least K candidates that are not
    EOS, since each beam has one EOS.
    """
    batch, k = scores.shape
    vocab = log_probs.size(-1)
    candidates = scores[:, :, None] + log_probs.view(batch, k, vocab)  # [B, K, V]
    top, index = candidates.flatten(1).topk(2 * k, dim=1)  # [B, 2K]
    return top, index // vocab, index % vocab


def _beam_step(
    model: Seq2SeqTransformer,
    memory: torch.Tensor,
    src: torch.Tensor,
    beams: _Beams,
    best: _Best,
    length_penalty: float,
) -> None:
    """Extend every live hypothesis by one token.

    Of each source's top ``K`` candidates, the best that ends in EOS is offered to ``best``;
    the ``K`` best that do not end there become the new beams.
    """
    k = beams.scores.size(1)
    length = beams.tokens.size(1)  # each candidate's generated tokens: those after BOS + 1
    logits = _next_logits(model, beams.tokens, memory, src, beams.cache)  # [B*K, V]
    top, beam, token = _top_candidates(beams.scores, logits.log_softmax(-1))  # [B, 2K]
    finished = top[:, :k].masked_fill(token[:, :k] != EOS, float("-inf"))  # [B, K]
    finished_score, j = (finished / _length_penalty(length, length_penalty)).max(1)
    ended = beams.tokens[beams.rows(beam.gather(1, j[:, None]))]  # [B, length]
    best.offer(torch.cat((ended, torch.full_like(ended[:, :1], EOS)), 1), finished_score)
    beams.advance(top, beam, token)


def beam_search(
    model: Seq2SeqTransformer,
    src: torch.Tensor,
    beam_size: int = 4,
    max_new_tokens: int = 32,
    length_penalty: float = 0.0,
    use_cache: bool = True,
) -> torch.Tensor:
    """The best hypothesis per source of a ``beam_size``-wide search, for a batch at once.

    A hypothesis of ``n`` generated tokens (EOS included) and log-probability ``s`` scores
    ``s / ((5 + n) / 6) ** length_penalty`` (GNMT's length penalty, Wu et al. 2016):
    ``0`` ranks by ``s`` alone, which favours short outputs; larger values favour longer
    ones (GNMT used 0.6 to 1).

    Each step extends each of a source's ``beam_size`` live hypotheses by every token and
    ranks the candidates. An EOS candidate among the top ``beam_size`` is finished: it is
    kept aside (the best finished one per source) and its beam slot goes to the next
    candidate, so the beam always holds ``beam_size`` live hypotheses. The search ends
    when no live hypothesis of any source can still beat that source's best finished one
    (log-probabilities only fall), or at ``max_new_tokens``, where a live hypothesis
    competes unfinished. The decoder cache is reordered to follow the surviving
    hypotheses. With ``length_penalty=0``, ``beam_size=1`` is greedy decoding exactly.
    """
    check_beam_search(model, beam_size, length_penalty)
    batch, k = src.size(0), beam_size
    with _decoding(model, max_new_tokens):
        # a source's K beams are adjacent rows; its memory is encoded once and copied
        memory = model.encode(src).repeat_interleave(k, dim=0)  # [B*K, S, D]
        src = src.repeat_interleave(k, dim=0)  # [B*K, S]
        beams = _Beams.start(batch, k, memory, model.new_cache() if use_cache else None)
        best = _Best.none(batch, max_new_tokens, memory)
        # a live hypothesis ends with a log-probability <= its score now (<= 0) and with at
        # most max_new_tokens tokens, so it can score at most score / reach in the end
        reach = _length_penalty(max_new_tokens, length_penalty)
        for _ in range(max_new_tokens):
            _beam_step(model, memory, src, beams, best, length_penalty)
            if bool((best.score >= beams.scores.max(1).values / reach).all()):
                break

        # a live hypothesis can only win at max_new_tokens (by the bound above)
        length = beams.tokens.size(1) - 1
        live_score, j = (beams.scores / _length_penalty(length, length_penalty)).max(1)
        best.offer(beams.tokens[beams.rows(j[:, None])], live_score)
        width = int((best.tokens != PAD).sum(1).max())  # drop the columns PAD in every row
        return best.tokens[:, :width]
