"""The network's settings as one typed config: every default once, each with its help.

:class:`TransformerConfig` is what a :class:`~transformer_lab.model.Seq2SeqTransformer` is
built from, and :meth:`TransformerConfig.to_dict` / :meth:`TransformerConfig.from_dict`
the one dict that rebuilds it (nanoGPT's ``model_args``). Each stack's own choices sit in
a :class:`StackConfig` of their own, ``encoder`` and ``decoder`` (fairseq's
``EncDecBaseConfig``), and an option's own settings under ``options`` (:mod:`.options`).
The keyword API (:data:`KEYWORDS`) is generated from the fields: it names a stack's choices
``encoder_norm``, ``decoder_pos_encoding`` and so on. The defaults are the paper's base
model; the lab's own values are the runs' config (``conf/model/transformer.yaml``, an
option's in its own YAML).
Optimisation is not the network's business: :mod:`transformer_lab.training.optim`.
"""

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

from transformer_lab.config.keywords import Keywords
from transformer_lab.config.typed import from_settings
from transformer_lab.config.validation import (
    InvalidSetting,
    check_flag,
    check_integer,
    check_number,
)
from transformer_lab.model.layers import FFNS
from transformer_lab.model.norms import NORM_TYPES
from transformer_lab.model.options import DECODER, ENCODER, settings_class
from transformer_lab.model.positional import POSITIONAL_ENCODINGS
from transformer_lab.model.residual import NORM_PLACEMENTS

STACKS = (ENCODER.name, DECODER.name)
# the option axes: each setting's registry; a stack may choose its own norm and pos_encoding
AXES = {
    "norm": NORM_PLACEMENTS,
    "pos_encoding": POSITIONAL_ENCODINGS,
    "ffn": FFNS,
    "norm_type": NORM_TYPES,
}
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
        default=None,
        metadata={"help": "this stack's norm placement; None: the shared norm", "choices": "norm"},
    )
    pos_encoding: str | None = field(
        default=None,
        metadata={
            "help": "this stack's positional encoding; None: the shared pos_encoding",
            "choices": "pos_encoding",
        },
    )


PER_STACK = tuple(f.name for f in dataclasses.fields(StackConfig))


@dataclass(frozen=True)
class TransformerConfig:
    """The encoder-decoder network; defaults: the base model of Vaswani et al. (2017).

    The fields are in the order of :class:`~transformer_lab.model.Seq2SeqTransformer`'s
    positional arguments (:data:`KEYWORDS`), which callers use.
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
        default=2048, metadata={"help": "FFN hidden width (gated FFNs: 2/3 of it, same budget)"}
    )
    dropout: float = field(
        default=0.1, metadata={"help": "on residual branches, attention weights, FFN, embeddings"}
    )
    norm: str = field(
        default="post",
        metadata={"help": "norm placement, shared by both stacks", "choices": "norm"},
    )
    pos_encoding: str = field(
        default="sinusoidal",
        metadata={"help": "positional encoding of both stacks", "choices": "pos_encoding"},
    )
    ffn: str = field(
        default="relu",
        metadata={
            "help": "the feed-forward sublayer (the keyword API calls it activation)",
            "choices": "ffn",
            "keyword": "activation",
        },
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
    norm_type: str = field(
        default="layernorm", metadata={"help": "the norm itself", "choices": "norm_type"}
    )
    encoder: StackConfig = field(
        default_factory=StackConfig, metadata={"help": "the encoder's own choices"}
    )
    decoder: StackConfig = field(
        default_factory=StackConfig, metadata={"help": "the decoder's own choices"}
    )
    options: dict = field(
        default_factory=dict,
        metadata={
            "help": "an option's own settings by its name (options.t5_bias.num_buckets); "
            "an option in use that is left out gets its defaults"
        },
    )

    def __post_init__(self):
        """InvalidSetting for the first size that is not a positive integer, the bad head
        split, a dropout outside [0, 1), a flag or a seed of the wrong kind, an unknown
        name (``encoder.norm`` for the encoder's own placement), an option's unknown or bad
        setting (``options.t5_bias.num_buckets``). ``options`` ends typed, holding the
        settings of every option in use that has any."""
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
        for key, registry in AXES.items():
            registry.lookup(getattr(self, key))
            for stack in STACKS if key in PER_STACK else ():
                own = getattr(getattr(self, stack), key)
                if own is not None:  # None: the shared choice
                    registry.lookup(own, f"{stack}.{key}")
        object.__setattr__(self, "options", _option_settings(self.options, self.in_use()))

    def stack(self, stack: str, key: str) -> str:
        """The choice ``key`` (``norm`` or ``pos_encoding``) of ``stack``: its own, else the
        shared one."""
        own = getattr(getattr(self, stack), key)
        return getattr(self, key) if own is None else own

    def in_use(self) -> set[str]:
        """The names of the options some stack of the network uses."""
        return {self.stack(stack, key) for key in PER_STACK for stack in STACKS} | {
            self.ffn,
            self.norm_type,
        }

    @classmethod
    def from_keywords(cls, *arguments, **keywords) -> "TransformerConfig":
        """From :class:`~transformer_lab.model.Seq2SeqTransformer`'s keyword API
        (:data:`KEYWORDS`, generated from the fields)."""
        return KEYWORDS.build(*arguments, **keywords)

    def keywords(self) -> dict:
        """The flat keywords :meth:`from_keywords` takes back."""
        return KEYWORDS.of(self)

    def to_dict(self) -> dict:
        """One dict of primitives (the stacks and the options' settings nested), the run
        config's ``model`` node but for the vocabularies it may leave to the data;
        :meth:`from_dict` rebuilds it."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, settings: dict) -> "TransformerConfig":
        """From :meth:`to_dict`'s form (the ``model`` node), or InvalidSetting for a key
        that is no setting (``+model.qk=1``, ``model.encoder.qk``) or a required one left
        out; a stack left out shares every choice, an option left out has its defaults."""
        settings = dict(settings)
        for stack in STACKS:
            try:
                settings[stack] = from_settings(StackConfig, settings.get(stack) or {})
            except InvalidSetting as error:
                raise error.within(stack) from None
        return from_settings(cls, settings)


KEYWORDS = Keywords(TransformerConfig)  # the network's keyword API, generated from the fields


def option_class(name: str) -> type | None:
    """The class registered as ``name`` on any option axis (the names are distinct across
    the axes, tests/model/test_options.py), or None."""
    return next((r[name] for r in AXES.values() if name in r), None)


def _option_settings(options, in_use: set[str]) -> dict:
    """``options`` (name -> a dict of settings, or the option's ``Settings``) checked and
    typed: InvalidSetting for a name of no option that takes settings, an option's unknown
    or bad setting (:func:`~transformer_lab.config.typed.from_settings`, then its own
    checks). Every option of ``in_use`` that has settings and is left out gets its
    defaults, so the saved config holds every value the network was built with."""
    if not isinstance(options, Mapping):
        raise InvalidSetting("options", options, "not a node", "a node of option: settings")
    taking = [name for r in AXES.values() for name, cls in r.items() if settings_class(cls)]
    typed = {}
    for name, given in options.items():
        declared = settings_class(option_class(name))
        if declared is None:
            reason = "no option of that name takes settings"
            raise InvalidSetting(f"options.{name}", given, reason, ", ".join(taking) or "none")
        if not isinstance(given, declared):
            if not isinstance(given, Mapping):
                reason = f"not a node of {name}'s settings"
                raise InvalidSetting(f"options.{name}", given, reason, "a node")
            try:
                given = from_settings(declared, dict(given))
            except InvalidSetting as error:
                raise error.within(f"options.{name}") from None
        typed[name] = given
    for name in sorted(in_use - set(typed)):
        declared = settings_class(option_class(name))
        if declared is not None:
            typed[name] = declared()
    return typed
