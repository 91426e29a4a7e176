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
import inspect
import math
from dataclasses import dataclass

import torch
from torch import nn

from transformer_lab.model import decoding, masks
from transformer_lab.model.attention import KVCache
from transformer_lab.model.config import KEYWORDS, TransformerConfig
from transformer_lab.model.embedding import TokenEmbedding
from transformer_lab.model.init import initialize, scale_residual_branches
from transformer_lab.model.layers import DecoderLayer, EncoderLayer, LayerConfig
from transformer_lab.model.options import DECODER, ENCODER, Stack
from transformer_lab.model.positional import PositionalEncoding, build_positional_encoding
from transformer_lab.model.residual import deepnorm_scales, final_norm
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

    Built from a :class:`~transformer_lab.model.config.TransformerConfig` (``config=``), the
    one construction path, or from ``src_vocab_size``, ``tgt_vocab_size`` and keywords (or
    positional arguments in their order) that make that config: the keyword API generated
    from its fields (:data:`~transformer_lab.model.config.KEYWORDS`), where each default and
    its help live: a field by its name but the FFN, ``activation``, and a stack's own choice
    as ``encoder_norm``, ``decoder_pos_encoding`` and so on. ``self.config`` rebuilds it.
    ``init_seed`` makes the initial weights independent of the global RNG (see
    :mod:`.init`). The attributes ``encoder_norm``/``decoder_norm`` are the stacks' final
    norms (their state-dict keys predate the keywords of those names).
    """

    def __init__(self, *args, config: TransformerConfig | None = None, **keywords):
        super().__init__()
        if config is None:
            config = KEYWORDS.build(*args, **keywords)
        elif args or keywords:
            raise TypeError(
                f"Seq2SeqTransformer takes a config, or at most {len(KEYWORDS.names)} "
                "positional arguments and keywords"
            )
        self.config = c = config
        self.d_model, self.max_len = c.d_model, c.max_len
        self.embed_scale = math.sqrt(c.d_model)

        self.src_embed = TokenEmbedding(c.src_vocab_size, c.d_model)
        self.tgt_embed = TokenEmbedding(c.tgt_vocab_size, c.d_model)
        self.src_pos = _positional_encoding(c, ENCODER)
        self.tgt_pos = _positional_encoding(c, DECODER)
        self.embed_dropout = nn.Dropout(c.dropout)
        # each stack's constants follow from its own placement (1s unless deepnorm); a
        # deepnorm stack keeps DeepNet's encoder-decoder constants, which depend on both
        # depths, whatever the other stack's placement
        encoder_norm, decoder_norm = c.stack("encoder", "norm"), c.stack("decoder", "norm")
        depths = (c.num_encoder_layers, c.num_decoder_layers)
        (enc_alpha, enc_beta), _ = deepnorm_scales(encoder_norm, *depths)
        _, (dec_alpha, dec_beta) = deepnorm_scales(decoder_norm, *depths)
        encoder = LayerConfig(
            d_model=c.d_model,
            num_heads=c.num_heads,
            d_ff=c.d_ff,
            dropout=c.dropout,
            norm=encoder_norm,
            norm_type=c.norm_type,
            activation=c.ffn,
            alpha=enc_alpha,
            stack=ENCODER,
            options=c.options,
        )
        decoder = dataclasses.replace(encoder, norm=decoder_norm, alpha=dec_alpha, stack=DECODER)
        self.encoder_layers, self.encoder_norm = _stack(EncoderLayer, encoder, c.num_encoder_layers)
        self.decoder_layers, self.decoder_norm = _stack(DecoderLayer, decoder, c.num_decoder_layers)
        self.output = nn.Linear(c.d_model, c.tgt_vocab_size)
        if c.tie_embeddings:
            self.output.weight = self.tgt_embed.weight
        initialize(self, c.init_seed)
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
        # compiled, the batch's entry point checks; a meta tensor (the check of a run's
        # memory, job/resources.py) holds no values to check
        if not torch.compiler.is_compiling() and src.device.type != "meta":
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


# what help() and inspect show: the keyword API generated from the config's fields, then config
Seq2SeqTransformer.__signature__ = KEYWORDS.signature(
    inspect.Parameter("config", inspect.Parameter.KEYWORD_ONLY, default=None)
)


def _positional_encoding(c: TransformerConfig, stack: Stack) -> PositionalEncoding:
    """The positional encoding ``stack`` chose, told its stack, with its own settings."""
    name = c.stack(stack.name, "pos_encoding")
    return build_positional_encoding(
        name, c.d_model, c.num_heads, c.max_len, stack, c.options.get(name)
    )


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
    closing = final_norm(
        config.d_model,
        config.norm,
        config.norm_type,
        stack=config.stack,
        settings=config.options.get(config.norm_type),
    )
    return layers, closing
