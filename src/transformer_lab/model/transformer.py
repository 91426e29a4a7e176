"""The encoder-decoder Transformer of Vaswani et al. (2017), with its choices made explicit.

``norm`` places the norms and ``norm_type`` picks them (:mod:`.residual`),
``pos_encoding`` picks how positions enter (:mod:`.positional`), ``activation`` picks the
FFN (:mod:`.layers`). The model returns logits; the softmax belongs to the loss or the
decoder's search.

``encoder_norm``/``decoder_norm`` and ``encoder_pos_encoding``/``decoder_pos_encoding``
give one stack a choice of its own (None: the shared ``norm`` or ``pos_encoding``), for
controls such as Liu et al.'s (2020) post-norm encoder with a pre-norm decoder. A stack's
choice alone decides what it gets: its final norm (for the placements that normalise
before), deepnorm's constants, its positional encoding. Both stacks set to the shared
choice build the very model of the shared choice, weight for weight.
"""

import dataclasses
import math
from dataclasses import dataclass

import torch
from torch import nn

from transformer_lab.config.registry import Registry
from transformer_lab.config.validation import (
    InvalidSetting,
    check_flag,
    check_integer,
    check_number,
)
from transformer_lab.model import decoding, masks
from transformer_lab.model.attention import KVCache
from transformer_lab.model.embedding import TokenEmbedding
from transformer_lab.model.init import initialize, scale_residual_branches
from transformer_lab.model.layers import DecoderLayer, EncoderLayer, LayerConfig
from transformer_lab.model.positional import (
    POSITIONAL_ENCODINGS,
    PositionalEncoding,
    build_positional_encoding,
)
from transformer_lab.model.residual import NORM_PLACEMENTS, deepnorm_scales, final_norm
from transformer_lab.tokens import PAD


@dataclass
class DecoderCache:
    """Everything incremental decoding reuses: per-layer self- and cross-attention K/V and
    the padding of the target keys fed so far (``[B, 1, 1, P]``)."""

    self_attn: list[KVCache]
    cross_attn: list[KVCache]
    key_padding: torch.Tensor | None = None

    @property
    def length(self) -> int:
        """Target positions already decoded: the absolute position of the next token."""
        return 0 if self.key_padding is None else self.key_padding.size(-1)

    def reorder(self, index: torch.Tensor) -> None:
        for kv in (*self.self_attn, *self.cross_attn):
            kv.reorder(index)
        if self.key_padding is not None:
            self.key_padding = self.key_padding.index_select(0, index)


class Seq2SeqTransformer(nn.Module):
    """Source and target embeddings, an encoder and a decoder stack, an output head.

    ``init_seed`` makes the initial weights independent of the global RNG (see
    :mod:`.init`); leave it ``None`` to draw from the global RNG as usual. The arguments
    ``encoder_norm``/``decoder_norm`` name a placement; the attributes of those names are
    the stacks' final norms (their state-dict keys predate the arguments).
    """

    def __init__(
        self,
        src_vocab_size: int,
        tgt_vocab_size: int,
        d_model: int = 512,
        num_heads: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        d_ff: int = 2048,
        dropout: float = 0.1,
        norm: str = "post",
        pos_encoding: str = "sinusoidal",
        activation: str = "relu",
        max_len: int = 512,
        tie_embeddings: bool = False,
        init_seed: int | None = None,
        norm_type: str = "layernorm",
        encoder_norm: str | None = None,
        decoder_norm: str | None = None,
        encoder_pos_encoding: str | None = None,
        decoder_pos_encoding: str | None = None,
    ):
        super().__init__()
        _check_arguments(
            dropout,
            tie_embeddings,
            init_seed,
            src_vocab_size=src_vocab_size,
            tgt_vocab_size=tgt_vocab_size,
            d_model=d_model,
            num_heads=num_heads,
            num_encoder_layers=num_encoder_layers,
            num_decoder_layers=num_decoder_layers,
            d_ff=d_ff,
            max_len=max_len,
        )
        encoder_norm, decoder_norm = _stack_choices(
            NORM_PLACEMENTS, norm, encoder_norm, decoder_norm
        )
        encoder_pos_encoding, decoder_pos_encoding = _stack_choices(
            POSITIONAL_ENCODINGS, pos_encoding, encoder_pos_encoding, decoder_pos_encoding
        )
        self.d_model, self.max_len = d_model, max_len
        self.embed_scale = math.sqrt(d_model)

        self.src_embed = TokenEmbedding(src_vocab_size, d_model)
        self.tgt_embed = TokenEmbedding(tgt_vocab_size, d_model)
        self.src_pos = build_positional_encoding(encoder_pos_encoding, d_model, num_heads, max_len)
        self.tgt_pos = build_positional_encoding(decoder_pos_encoding, d_model, num_heads, max_len)
        self.embed_dropout = nn.Dropout(dropout)
        # each stack's constants follow from its own placement (1s unless deepnorm); a
        # deepnorm stack keeps DeepNet's encoder-decoder constants, which depend on both
        # depths, whatever the other stack's placement
        (enc_alpha, enc_beta), _ = deepnorm_scales(
            encoder_norm, num_encoder_layers, num_decoder_layers
        )
        _, (dec_alpha, dec_beta) = deepnorm_scales(
            decoder_norm, num_encoder_layers, num_decoder_layers
        )
        encoder = LayerConfig(
            d_model=d_model,
            num_heads=num_heads,
            d_ff=d_ff,
            dropout=dropout,
            norm=encoder_norm,
            norm_type=norm_type,
            activation=activation,
            alpha=enc_alpha,
        )
        decoder = dataclasses.replace(encoder, norm=decoder_norm, alpha=dec_alpha)
        self.encoder_layers, self.encoder_norm = _stack(EncoderLayer, encoder, num_encoder_layers)
        self.decoder_layers, self.decoder_norm = _stack(DecoderLayer, decoder, num_decoder_layers)
        self.output = nn.Linear(d_model, tgt_vocab_size)
        if tie_embeddings:
            self.output.weight = self.tgt_embed.weight
        initialize(self, init_seed)
        scale_residual_branches(self.encoder_layers, enc_beta)
        scale_residual_branches(self.decoder_layers, dec_beta)

    # -- embeddings ----------------------------------------------------------------------

    def check_positions(self, end: int, what: str) -> None:
        """Positions ``0..end-1`` exist for every encoding, or a ValueError names ``what``."""
        if end > self.max_len:
            raise ValueError(
                f"{what} needs {end} positions but max_len={self.max_len}; "
                f"shorten the sequence or raise max_len"
            )

    def _positions(self, start: int, length: int, what: str, device) -> torch.Tensor:
        self.check_positions(start + length, what)
        return torch.arange(start, start + length, device=device)

    def _embed(
        self, embedding: nn.Embedding, pos: PositionalEncoding, tokens, positions
    ) -> torch.Tensor:
        x = pos.add(embedding(tokens) * self.embed_scale, positions)
        return self.embed_dropout(x)

    # -- the two stacks --------------------------------------------------------------------

    def encode(self, src: torch.Tensor, return_attention: bool = False):
        """``src [B, S]`` -> memory ``[B, S, D]`` (and the per-layer encoder weights)."""
        positions = self._positions(0, src.size(1), "the source", src.device)
        padding = masks.key_padding(src)  # [B, 1, 1, S]
        if not torch.compiler.is_compiling():  # compiled, the batch's entry point checks
            check_source(src)
        mask = masks.with_bias(padding, self.src_pos.bias(positions, positions))
        rotation = self.src_pos.rotation(positions)
        x = self._embed(self.src_embed, self.src_pos, src, positions)
        weights = []
        for layer in self.encoder_layers:
            x, w = layer(x, mask, rotation, need_weights=return_attention)
            weights.append(w)
        memory = self.encoder_norm(x)
        return (memory, weights) if return_attention else memory

    def decode(
        self,
        tgt_in: torch.Tensor,
        memory: torch.Tensor,
        src: torch.Tensor,
        cache: DecoderCache | None = None,
        return_attention: bool = False,
    ):
        """``tgt_in [B, T]`` over ``memory [B, S, D]`` -> logits ``[B, T, V]``.

        With a ``cache``, ``tgt_in`` continues the tokens already fed: it starts at absolute
        position ``cache.length``, and its keys and values are appended to the cache.
        """
        start = 0 if cache is None else cache.length
        positions = self._positions(start, tgt_in.size(1), "the target", tgt_in.device)
        padding = masks.key_padding(tgt_in)  # [B, 1, 1, T]
        if cache is not None:
            if cache.key_padding is not None:
                padding = torch.cat((cache.key_padding, padding), dim=-1)
            cache.key_padding = padding
        key_positions = torch.arange(padding.size(-1), device=tgt_in.device)
        self_mask = masks.with_bias(
            masks.combine(padding, masks.causal(positions, key_positions)),
            self.tgt_pos.bias(positions, key_positions),
        )
        memory_mask = masks.key_padding(src)
        rotation = self.tgt_pos.rotation(positions)
        x = self._embed(self.tgt_embed, self.tgt_pos, tgt_in, positions)
        self_weights, cross_weights = [], []
        for i, layer in enumerate(self.decoder_layers):
            x, sw, cw = layer(
                x,
                memory,
                self_mask,
                memory_mask,
                rotation,
                self_cache=None if cache is None else cache.self_attn[i],
                cross_cache=None if cache is None else cache.cross_attn[i],
                need_weights=return_attention,
            )
            self_weights.append(sw)
            cross_weights.append(cw)
        logits = self.output(self.decoder_norm(x))
        return (logits, self_weights, cross_weights) if return_attention else logits

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor, return_attention: bool = False):
        """Teacher-forced pass: ``src [B, S]``, ``tgt_in [B, T]`` -> logits ``[B, T, V]``.

        With ``return_attention`` also a dict ``{"encoder", "decoder_self", "cross"}`` of
        per-layer weights ``[B, H, L_q, L_k]`` (computed on the explicit attention path).
        """
        if not return_attention:
            return self.decode(tgt_in, self.encode(src), src)
        memory, encoder_weights = self.encode(src, return_attention=True)
        logits, self_weights, cross_weights = self.decode(
            tgt_in, memory, src, return_attention=True
        )
        return logits, {
            "encoder": encoder_weights,
            "decoder_self": self_weights,
            "cross": cross_weights,
        }

    # -- generation ------------------------------------------------------------------------

    def new_cache(self) -> DecoderCache:
        n = len(self.decoder_layers)
        return DecoderCache([KVCache() for _ in range(n)], [KVCache() for _ in range(n)])

    def generate(
        self, src: torch.Tensor, max_new_tokens: int = 32, use_cache: bool = True
    ) -> torch.Tensor:
        """Greedy decoding from BOS -> ``[B, <= 1 + max_new_tokens]``.

        Each row stops at its EOS (kept) or at the limit; finished rows are padded with
        PAD while others go on, and the loop ends when every row has finished. PAD and BOS
        are never emitted. Runs in eval mode and restores the caller's mode. Sampling and
        beam search live beside it in :mod:`.decoding`.
        """
        return decoding.greedy(self, src, max_new_tokens, use_cache)


def check_source(src: torch.Tensor) -> None:
    """A ValueError naming the rows of ``src [B, S]`` that hold nothing but PAD: their
    attention would have no key, and softmax over no key is NaN.

    The check reads the data (``bool()`` of a tensor), which splits a ``torch.compile``
    graph in two; so :meth:`Seq2SeqTransformer.encode` skips it while compiling and the
    compiled model's caller checks its batch first (``Seq2SeqLitModule`` for every batch,
    on the CPU before it moves to the device)."""
    real = src != PAD  # [B, S]
    if not bool(real.any(-1).all()):
        rows = (~real.any(-1)).nonzero().flatten().tolist()
        raise ValueError(f"source rows {rows} are all padding (PAD={PAD}); nothing to attend")


def _stack(
    layer: type[EncoderLayer | DecoderLayer], config: LayerConfig, num_layers: int
) -> tuple[nn.ModuleList, nn.Module]:
    """``num_layers`` layers built from ``config``, then the norm that closes the stack.

    Encoder and decoder stacks differ in their layer class, and in their placement and
    deepnorm's ``alpha`` where the model gives each stack its own.
    """
    layers = nn.ModuleList(layer(config) for _ in range(num_layers))
    return layers, final_norm(config.d_model, config.norm, config.norm_type)


def _stack_choices(registry: Registry, shared: str, encoder: str | None, decoder: str | None):
    """``(the encoder's choice, the decoder's choice)`` on the axis ``registry`` (``norm`` or
    ``pos_encoding``): each stack's own where given, else ``shared``; InvalidSetting names
    the setting (``encoder_norm``, ...) whose name is unknown."""
    registry.lookup(shared)
    for stack, own in (("encoder", encoder), ("decoder", decoder)):
        if own is not None:  # None: the shared choice
            registry.lookup(own, f"{stack}_{registry.setting}")
    return (shared if encoder is None else encoder), (shared if decoder is None else decoder)


def _check_arguments(dropout, tie_embeddings, init_seed, **sizes) -> None:
    """InvalidSetting for the first size that is not a positive integer, the bad head
    split, a dropout outside [0, 1), a flag or a seed of the wrong kind."""
    for name, value in sizes.items():
        check_integer(name, value, minimum=1)
    d_model, num_heads = sizes["d_model"], sizes["num_heads"]
    if d_model % num_heads:
        raise InvalidSetting(
            "d_model", d_model, f"not divisible by num_heads={num_heads}", "a multiple of num_heads"
        )
    check_number("dropout", dropout, minimum=0, below=1)
    check_flag("tie_embeddings", tie_embeddings)
    if init_seed is not None:  # None: draw from the global RNG
        check_integer("init_seed", init_seed, minimum=0, maximum=2**64 - 1)
