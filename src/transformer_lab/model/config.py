"""The network's settings as one typed config: every default once, each with its help.

:class:`TransformerConfig` is what a :class:`~transformer_lab.model.Seq2SeqTransformer` is
built from, and :meth:`TransformerConfig.to_dict` / :meth:`TransformerConfig.from_dict`
the one dict that rebuilds it (nanoGPT's ``model_args``). Each stack's own choices sit in
a :class:`StackConfig` of their own, ``encoder`` and ``decoder`` (fairseq's
``EncDecBaseConfig``); the keyword API names them ``encoder_norm``, ``decoder_pos_encoding``
and so on (:meth:`TransformerConfig.from_keywords`). The defaults are the paper's base
model; the lab's own values are the runs' config (``conf/model/transformer.yaml``).
Optimisation is not the network's business: :mod:`transformer_lab.training.optim`.
"""

import dataclasses
from dataclasses import dataclass, field

from transformer_lab.config.typed import from_settings
from transformer_lab.config.validation import (
    InvalidSetting,
    check_flag,
    check_integer,
    check_number,
)
from transformer_lab.model.layers import FFNS
from transformer_lab.model.norms import NORM_TYPES
from transformer_lab.model.positional import POSITIONAL_ENCODINGS
from transformer_lab.model.residual import NORM_PLACEMENTS

STACKS = ("encoder", "decoder")
PER_STACK = ("norm", "pos_encoding")  # the choices a stack may make on its own
KEYWORD_OF = {"ffn": "activation"}  # a field the keyword API names otherwise
SIZES = (  # positive integers, checked in this order
    "src_vocab_size",
    "tgt_vocab_size",
    "d_model",
    "num_heads",
    "num_encoder_layers",
    "num_decoder_layers",
    "d_ff",
    "max_len",
)


@dataclass(frozen=True)
class StackConfig:
    """One stack's own choices; None: the model's shared one."""

    norm: str | None = field(
        default=None, metadata={"help": "this stack's norm placement; None: the shared norm"}
    )
    pos_encoding: str | None = field(
        default=None,
        metadata={"help": "this stack's positional encoding; None: the shared pos_encoding"},
    )


@dataclass(frozen=True)
class TransformerConfig:
    """The encoder-decoder network; defaults: the base model of Vaswani et al. (2017).

    The fields are in the order of :class:`~transformer_lab.model.Seq2SeqTransformer`'s
    positional arguments (:meth:`keyword_names`), which callers use.
    """

    src_vocab_size: int = field(
        metadata={"help": "source vocabulary size, special tokens included"}
    )
    tgt_vocab_size: int = field(
        metadata={"help": "target vocabulary size, special tokens included"}
    )
    d_model: int = field(
        default=512, metadata={"help": "width of the residual stream and the embeddings"}
    )
    num_heads: int = field(default=8, metadata={"help": "attention heads per attention sublayer"})
    num_encoder_layers: int = field(default=6, metadata={"help": "encoder layers"})
    num_decoder_layers: int = field(default=6, metadata={"help": "decoder layers"})
    d_ff: int = field(
        default=2048, metadata={"help": "FFN hidden width (swiglu: 2/3 of it, for the same budget)"}
    )
    dropout: float = field(
        default=0.1, metadata={"help": "on residual branches, attention weights, FFN, embeddings"}
    )
    norm: str = field(
        default="post", metadata={"help": "norm placement, shared by both stacks: NORM_PLACEMENTS"}
    )
    pos_encoding: str = field(
        default="sinusoidal",
        metadata={"help": "positional encoding of both stacks: POSITIONAL_ENCODINGS"},
    )
    ffn: str = field(
        default="relu", metadata={"help": "the FFN: FFNS (the keyword API calls it activation)"}
    )
    max_len: int = field(
        default=512,
        metadata={"help": "positions available to every encoding, BOS and EOS included"},
    )
    tie_embeddings: bool = field(
        default=False, metadata={"help": "the output head shares the target embeddings"}
    )
    init_seed: int | None = field(
        default=None, metadata={"help": "seed of the initial weights; None: the global RNG"}
    )
    norm_type: str = field(default="layernorm", metadata={"help": "the norm itself: NORM_TYPES"})
    encoder: StackConfig = field(
        default_factory=StackConfig, metadata={"help": "the encoder's own choices"}
    )
    decoder: StackConfig = field(
        default_factory=StackConfig, metadata={"help": "the decoder's own choices"}
    )

    def __post_init__(self):
        """InvalidSetting for the first size that is not a positive integer, the bad head
        split, a dropout outside [0, 1), a flag or a seed of the wrong kind, an unknown
        name (``encoder.norm`` for the encoder's own placement)."""
        for name in SIZES:
            check_integer(name, getattr(self, name), minimum=1)
        if self.d_model % self.num_heads:
            raise InvalidSetting(
                "d_model",
                self.d_model,
                f"not divisible by num_heads={self.num_heads}",
                "a multiple of num_heads",
            )
        check_number("dropout", self.dropout, minimum=0, below=1)
        check_flag("tie_embeddings", self.tie_embeddings)
        if self.init_seed is not None:  # None: draw from the global RNG
            check_integer("init_seed", self.init_seed, minimum=0, maximum=2**64 - 1)
        for key, registry in (("norm", NORM_PLACEMENTS), ("pos_encoding", POSITIONAL_ENCODINGS)):
            registry.lookup(getattr(self, key))
            for stack in STACKS:
                own = getattr(getattr(self, stack), key)
                if own is not None:  # None: the shared choice
                    registry.lookup(own, f"{stack}.{key}")
        NORM_TYPES.lookup(self.norm_type)
        FFNS.lookup(self.ffn)

    def stack(self, stack: str, key: str) -> str:
        """The choice ``key`` (``norm`` or ``pos_encoding``) of ``stack``: its own, else the
        shared one."""
        own = getattr(getattr(self, stack), key)
        return getattr(self, key) if own is None else own

    @classmethod
    def from_keywords(cls, **keywords) -> "TransformerConfig":
        """From :class:`~transformer_lab.model.Seq2SeqTransformer`'s keywords, where a stack's
        own choice is ``<stack>_<key>`` (``encoder_norm=...``) and the FFN ``activation``."""
        stacks = {
            stack: StackConfig(**{key: keywords.pop(f"{stack}_{key}", None) for key in PER_STACK})
            for stack in STACKS
        }
        for name, keyword in KEYWORD_OF.items():
            if keyword in keywords:
                keywords[name] = keywords.pop(keyword)
        try:
            return cls(**keywords, **stacks)
        except InvalidSetting as error:  # named by the keyword the caller typed
            stack, _, key = error.key.rpartition(".")
            keyword = f"{stack}_{key}" if stack else KEYWORD_OF.get(key, key)
            raise InvalidSetting(keyword, error.value, error.reason, error.allowed) from None

    @classmethod
    def keyword_defaults(cls) -> dict:
        """``{keyword: default}`` of :meth:`from_keywords`, in positional order; a required
        one's default is ``dataclasses.MISSING``."""
        shared = {
            KEYWORD_OF.get(f.name, f.name): f.default
            for f in dataclasses.fields(cls)
            if f.name not in STACKS
        }
        return shared | {f"{stack}_{key}": None for key in PER_STACK for stack in STACKS}

    @classmethod
    def keyword_names(cls) -> list[str]:
        return list(cls.keyword_defaults())

    def keywords(self) -> dict:
        """The keywords :meth:`from_keywords` takes back: one flat dict of primitives."""
        flat = {KEYWORD_OF.get(name, name): value for name, value in self.to_dict().items()}
        for stack in STACKS:
            for key, value in flat.pop(stack).items():
                flat[f"{stack}_{key}"] = value
        return flat

    def to_dict(self) -> dict:
        """One dict of primitives (the stacks nested), the run config's ``model`` node but
        for the vocabularies it may leave to the data; :meth:`from_dict` rebuilds it."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, settings: dict) -> "TransformerConfig":
        """From :meth:`to_dict`'s form (the ``model`` node), or InvalidSetting for a key
        that is no setting (``+model.qk=1``, ``model.encoder.qk``) or a required one left
        out; a stack left out shares every choice."""
        settings = dict(settings)
        for stack in STACKS:
            try:
                settings[stack] = from_settings(StackConfig, settings.get(stack) or {})
            except InvalidSetting as error:
                raise error.within(stack) from None
        return from_settings(cls, settings)
