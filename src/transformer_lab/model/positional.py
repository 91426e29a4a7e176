"""Positional encodings, one exclusive choice each, chosen by name.

Every encoding answers the same three questions, so the rest of the model never asks
which one it has, and declares which of them it answers (``adds``, ``rotates``,
``biases``: what a test of every encoding needs to know, checked against the answers):

- :meth:`PositionalEncoding.add` -- what to add to the scaled token embeddings
  (sinusoidal, learned);
- :meth:`PositionalEncoding.rotation` -- how to rotate queries and keys of self-attention
  (rotary);
- :meth:`PositionalEncoding.bias` -- which additive bias to put on self-attention scores
  (ALiBi, T5's relative bias).

Each is built knowing its stack (:class:`~.options.Stack`: an encoding of the causal decoder
may bucket its distances one way) and with its own settings, if it declares any
(:class:`~.options.Option`).

Each also gives its :meth:`PositionalEncoding.picture`, the data of the figure the
callbacks draw of it (:mod:`transformer_lab.callbacks.positional_map`), so a new encoding
brings its own picture. The encodings are registered by name in :data:`POSITIONAL_ENCODINGS`.

Each takes explicit absolute ``positions`` so that incremental decoding gives a step at
position t the encoding of t, never a restart at 0. None of them touches cross-attention:
the decoder finds source positions only through what the encoder put into the memory.
"""

import math
from dataclasses import dataclass, field

import torch
from torch import nn

from transformer_lab.config.registry import Registry
from transformer_lab.config.validation import InvalidSetting, check_integer
from transformer_lab.model.init import OwnsInit
from transformer_lab.model.options import ENCODER, Option, Stack, built

POSITIONAL_ENCODINGS = Registry("pos_encoding")


@dataclass
class Panel:
    """One heatmap of a picture: ``values [rows, cols]`` on the colour scale ``limits``."""

    values: torch.Tensor
    limits: tuple[float, float]
    xlabel: str
    ylabel: str
    title: str
    cmap: str = "RdBu_r"


@dataclass
class Picture:
    """What an encoding looks like: panels side by side in a figure of ``size`` inches."""

    panels: list[Panel]
    size: tuple[float, float]


class PositionalEncoding(nn.Module, Option):
    """No positional information (``none``); the base every encoding overrides.

    ``stack`` and ``settings`` (:meth:`~.options.Option.place`) are keywords every encoding
    takes (a subclass passes them on as ``**where``)."""

    trained = False  # its picture is drawn at the end of fit (at the start it is the init)
    adds = False  # add() adds to the token embeddings
    rotates = False  # rotation() rotates queries and keys
    biases = False  # bias() biases self-attention scores

    def __init__(
        self, d_model: int, num_heads: int, max_len: int, *, stack: Stack = ENCODER, settings=None
    ):
        super().__init__()
        self.max_len = max_len
        self.place(stack, settings)

    def add(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """``x [B, L, D]`` plus the encoding of ``positions [L]``."""
        return x

    def rotation(self, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor] | None:
        """``(cos, sin)``, each ``[L, head_dim/2]``, to rotate queries and keys with."""
        return None

    def bias(self, q_positions: torch.Tensor, k_positions: torch.Tensor) -> torch.Tensor | None:
        """Additive attention bias ``[H, L_q, L_k]`` for self-attention."""
        return None

    def picture(self, num_positions: int) -> Picture | None:
        """The first ``num_positions`` (<= max_len) positions as a picture; None: nothing
        to draw."""
        return None


def _table_picture(table: torch.Tensor, limit: float, kind: str) -> Picture:
    """A table ``[positions, d_model]`` as one heatmap, position x dimension."""
    title = f"{kind} positional encoding [position x dimension]"
    panel = Panel(table.float().cpu(), (-limit, limit), "dimension", "position", title)
    return Picture([panel], (7.0, 5.0))


def sinusoid_table(max_len: int, d_model: int) -> torch.Tensor:
    """The paper's table ``[max_len, d_model]``: even columns sin, odd columns cos.

    ``PE[pos, 2i] = sin(pos / 10000^(2i/d))``, ``PE[pos, 2i+1] = cos(pos / 10000^(2i/d))``.
    """
    positions = torch.arange(max_len, dtype=torch.float64)[:, None]
    frequencies = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = positions * frequencies  # [max_len, d/2]
    table = torch.empty(max_len, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles)
    return table.float()


@POSITIONAL_ENCODINGS.register("sinusoidal")
class Sinusoidal(PositionalEncoding):
    """The fixed sin/cos table of Vaswani et al. (2017), a non-trainable buffer.

    Picture: the table on a -1..1 scale, fast oscillations in the first dimensions, slow
    ones in the last.
    """

    adds = True

    def __init__(self, d_model: int, num_heads: int, max_len: int, **where):
        super().__init__(d_model, num_heads, max_len, **where)
        if d_model % 2:
            raise InvalidSetting(
                "d_model",
                d_model,
                "odd, and pos_encoding='sinusoidal' fills sin/cos pairs",
                "an even d_model, or another pos_encoding",
            )
        self.register_buffer("table", sinusoid_table(max_len, d_model), persistent=False)

    def add(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        return x + self.table[positions].to(x.dtype)

    def picture(self, num_positions: int) -> Picture:
        return _table_picture(self.table[:num_positions], 1.0, "sinusoidal")


class PositionTable(nn.Embedding, OwnsInit):
    """The learned encoding's table ``[max_len, d_model]``, drawn at the sinusoid's scale.

    ``N(0, 1/2)``: every row of the sinusoid has squared norm exactly ``d_model / 2`` (each
    sin/cos pair squares to 1), i.e. a root mean square of ``sqrt(1/2) ~ 0.71`` per
    component, and a row of this table has that squared norm in expectation. Both are
    added unscaled to token embeddings of std 1 (``N(0, d_model^-0.5)`` times
    ``sqrt(d_model)``), so ``learned`` starts with the sinusoid's position-to-token ratio
    and differs from it only in being trained and unstructured. The token embeddings'
    ``N(0, d_model^-0.5)`` (the init before this one, std 0.125 at d_model 64) gave
    positions a sixth of the sinusoid's weight next to the tokens, a handicap in every
    comparison of speed. Scaling the table like the tokens (times ``sqrt(d_model)``) was
    the other way: it would start positions at std 1, above the sinusoid, and multiply the
    table's effective learning rate by ``sqrt(d_model)``, two differences instead of one.
    """

    INIT_STD = math.sqrt(0.5)

    @torch.no_grad()
    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        self.weight.normal_(0.0, self.INIT_STD, generator=generator)


@POSITIONAL_ENCODINGS.register("learned")
class Learned(PositionalEncoding):
    """A trained absolute table (BERT/GPT-2 style), added unscaled like the sinusoid.

    Picture: the trained table on a symmetric scale, drawn at the end of fit.
    """

    trained = True
    adds = True

    def __init__(self, d_model: int, num_heads: int, max_len: int, **where):
        super().__init__(d_model, num_heads, max_len, **where)
        self.table = PositionTable(max_len, d_model)

    def add(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        return x + self.table(positions)

    def picture(self, num_positions: int) -> Picture:
        table = self.table.weight.detach()[:num_positions]
        return _table_picture(table, table.abs().max().item(), "learned")


@POSITIONAL_ENCODINGS.register("rotary")
class Rotary(PositionalEncoding):
    """RoPE (Su et al., 2021): rotate each query/key pair of dims by ``position * freq``.

    The score ``q_i . k_j`` then depends on ``i - j`` only. Pairs are (d, d + head_dim/2)
    (the GPT-NeoX layout), which is the paper's interleaved form up to a fixed permutation
    of head dimensions and avoids strided copies.

    Picture: what rotation alone does to attention, the score of one and the same vector
    as query at position i and as key at position j, ``mean_d cos((i - j) theta_d)``.
    """

    rotates = True

    def __init__(self, d_model: int, num_heads: int, max_len: int, **where):
        super().__init__(d_model, num_heads, max_len, **where)
        head_dim = d_model // num_heads
        if head_dim % 2:
            raise InvalidSetting(
                "d_model",
                d_model,
                f"the head dimension d_model/num_heads={d_model}/{num_heads}={head_dim} is odd, "
                "and pos_encoding='rotary' rotates pairs of it",
                "an even d_model/num_heads, or another pos_encoding",
            )
        frequencies = 10000.0 ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
        angles = torch.arange(max_len, dtype=torch.float64)[:, None] * frequencies
        self.register_buffer("cos", angles.cos().float(), persistent=False)
        self.register_buffer("sin", angles.sin().float(), persistent=False)

    def rotation(self, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.cos[positions], self.sin[positions]

    def picture(self, num_positions: int) -> Picture:
        head_dim = 2 * self.cos.size(-1)
        positions = torch.arange(num_positions, device=self.cos.device)
        ones = torch.ones(1, 1, num_positions, head_dim, device=positions.device)  # [1, 1, L, Dh]
        rotated = rotate(ones, self.rotation(positions))[0, 0]  # [L, Dh]
        similarity = (rotated @ rotated.T / head_dim).cpu()  # [L, L]
        title = "rotary: score of one vector at positions i, j"
        panel = Panel(similarity, (-1.0, 1.0), "key position", "query position", title)
        return Picture([panel], (6.0, 5.0))


def rotate(x: torch.Tensor, rotation: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """Apply a rotary ``(cos, sin)`` pair ``[L, Dh/2]`` to ``x [B, H, L, Dh]``."""
    cos, sin = (t.to(x.dtype) for t in rotation)
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)


def alibi_slopes(num_heads: int) -> torch.Tensor:
    """Per-head slopes of Press et al. (2022): ``2^(-8/n), 2^(-16/n), ...``.

    For a head count that is not a power of two, the paper's recipe: the slopes of the
    nearest lower power of two, then every other slope of the next power of two.
    """

    def power_of_two(n: int) -> list[float]:
        start = 2.0 ** (-8.0 / n)
        return [start ** (i + 1) for i in range(n)]

    lower = 2 ** math.floor(math.log2(num_heads))
    slopes = power_of_two(lower) + power_of_two(2 * lower)[0::2][: num_heads - lower]
    return torch.tensor(slopes)


@POSITIONAL_ENCODINGS.register("alibi")
class ALiBi(PositionalEncoding):
    """Linear distance penalties on self-attention scores: ``-slope_h * |i - j|``.

    The encoder uses this symmetric (bidirectional) form; in the decoder the causal mask
    removes ``j > i``, which leaves exactly the paper's causal form ``-slope_h * (i - j)``.

    Picture: each head's bias, each on its own scale since the slopes differ by powers of
    two (the symmetric form; the decoder's causal mask keeps ``j <= i``).
    """

    biases = True

    def __init__(self, d_model: int, num_heads: int, max_len: int, **where):
        super().__init__(d_model, num_heads, max_len, **where)
        self.register_buffer("slopes", alibi_slopes(num_heads), persistent=False)

    def bias(self, q_positions: torch.Tensor, k_positions: torch.Tensor) -> torch.Tensor:
        distance = (q_positions[:, None] - k_positions[None, :]).abs()  # [L_q, L_k]
        return -self.slopes[:, None, None] * distance

    def picture(self, num_positions: int) -> Picture:
        positions = torch.arange(num_positions, device=self.slopes.device)
        bias = self.bias(positions, positions).cpu()  # [H, L, L]
        panels = [
            Panel(
                bias[head],
                (bias[head].min().item(), 0.0),
                "key position",
                "query position" if head == 0 else "",
                f"ALiBi head {head}: bias",
                cmap="Blues_r",
            )
            for head in range(bias.size(0))
        ]
        return Picture(panels, (2.6 * len(panels) + 0.8, 3.0))


def t5_buckets(
    relative: torch.Tensor, bidirectional: bool, num_buckets: int, max_distance: int
) -> torch.Tensor:
    """T5's bucket of each distance ``key - query`` in ``relative`` (Raffel et al., 2020,
    §2.1; Mesh TensorFlow's ``_relative_position_bucket``). Bidirectional: half the buckets
    for keys after the query; causal: a key after the query counts as distance 0 (the mask
    removes it). Of each half, the first ``exact`` distances get a bucket each, the rest
    log-spaced buckets up to ``max_distance``, beyond which all share the last."""
    buckets = torch.zeros_like(relative)
    if bidirectional:
        num_buckets //= 2
        buckets = buckets + (relative > 0).long() * num_buckets
        distance = relative.abs()
    else:
        distance = (-relative).clamp(min=0)
    exact = num_buckets // 2
    # clamp(min=1): the log of the exact ones, which torch.where drops, stays finite
    spread = torch.log(distance.clamp(min=1).float() / exact) / math.log(max_distance / exact)
    large = (exact + (spread * (num_buckets - exact)).long()).clamp(max=num_buckets - 1)
    return buckets + torch.where(distance < exact, distance, large)


@dataclass(frozen=True)
class T5BiasSettings:
    """T5's two settings, its defaults (Raffel et al., 2020, §2.1: "we use 32 embeddings
    ... with ranges that increase in size logarithmically up to an offset of 128")."""

    num_buckets: int = field(
        default=32, metadata={"help": "learned biases per head (bidirectional: half a direction)"}
    )
    max_distance: int = field(
        default=128, metadata={"help": "the distance from which on all share the last bucket"}
    )

    def __post_init__(self):
        """Room for an exact bucket in each direction, and log-spaced ones past them."""
        check_integer("num_buckets", self.num_buckets, minimum=4)
        check_integer("max_distance", self.max_distance, minimum=self.num_buckets // 2 + 1)


class BucketBiases(nn.Module, OwnsInit):
    """The learned bias of each bucket for each head, ``[num_buckets, H]``, drawn from
    ``N(0, d_model^-0.5)`` as Hugging Face's T5 draws its ``relative_attention_bias``."""

    def __init__(self, num_buckets: int, num_heads: int, d_model: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(num_buckets, num_heads))
        self.init_std = d_model**-0.5
        self.reset_parameters()

    @torch.no_grad()
    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        self.weight.normal_(0.0, self.init_std, generator=generator)

    def forward(self, buckets: torch.Tensor) -> torch.Tensor:
        return self.weight[buckets]  # [..., H]


@POSITIONAL_ENCODINGS.register("t5_bias")
class T5Bias(PositionalEncoding):
    """T5's relative position bias (Raffel et al., 2020, §2.1), the comparator of Press et
    al.'s Figure 1: "a learned, shared bias to each query-key score that is dependent on
    just the distance between the query and key" (§2.2). Distances fall into log-spaced
    buckets (:func:`t5_buckets`), both ways in the encoder, causal ones in the decoder (its
    stack says which); one bias per bucket and head, shared by every layer of the stack;
    nothing is added to the embeddings. Settings: :class:`T5BiasSettings`.

    Picture: each head's trained bias by query and key position, on its own symmetric
    scale (in the decoder the mask keeps ``j <= i``).
    """

    Settings = T5BiasSettings
    trained = True
    biases = True

    def __init__(self, d_model: int, num_heads: int, max_len: int, **where):
        super().__init__(d_model, num_heads, max_len, **where)
        self.table = BucketBiases(self.settings.num_buckets, num_heads, d_model)

    def buckets(self, q_positions: torch.Tensor, k_positions: torch.Tensor) -> torch.Tensor:
        """``[L_q, L_k]``: the bucket of each key's distance to each query."""
        relative = k_positions[None, :] - q_positions[:, None]  # key - query
        s = self.settings
        return t5_buckets(relative, not self.stack.causal, s.num_buckets, s.max_distance)

    def bias(self, q_positions: torch.Tensor, k_positions: torch.Tensor) -> torch.Tensor:
        return self.table(self.buckets(q_positions, k_positions)).permute(2, 0, 1)

    def picture(self, num_positions: int) -> Picture:
        positions = torch.arange(num_positions, device=self.table.weight.device)
        bias = self.bias(positions, positions).detach().float().cpu()  # [H, L, L]
        panels = []
        for head in range(bias.size(0)):
            limit = max(bias[head].abs().max().item(), 1e-6)
            ylabel = "query position" if head == 0 else ""
            title = f"T5 bias head {head} ({self.stack.name})"
            panels.append(Panel(bias[head], (-limit, limit), "key position", ylabel, title))
        return Picture(panels, (2.6 * len(panels) + 0.8, 3.0))


POSITIONAL_ENCODINGS.register("none")(PositionalEncoding)  # last in the list of names


def build_positional_encoding(
    name: str, d_model: int, num_heads: int, max_len: int, stack: Stack = ENCODER, settings=None
) -> PositionalEncoding:
    """The encoding ``name`` of a ``stack``, with its own ``settings`` (None: its defaults)."""
    cls = POSITIONAL_ENCODINGS.lookup(name)
    return built(cls, d_model, num_heads, max_len, stack=stack, settings=settings)
