"""What a registered option of the network may be given besides its sizes: the stack it sits
in, and settings of its own. Both are for an :class:`Option` (a class that subclasses it);
any other registered class is built from its sizes alone (:func:`built`), so a plain
``nn.Module`` registered as a norm type works as it is.

- **Its stack** (:class:`Stack`): the encoder attends both ways, the decoder causally, so an
  option built for the decoder can do what only a causal stack allows (T5's relative bias
  buckets the decoder's distances one way only). The network tells every option it builds.
- **Its settings**: an option class may declare ``Settings``, a frozen dataclass whose
  defaults are its paper's and whose fields each carry a one-line help (T5's
  ``num_buckets`` and ``max_distance``). A run's values live in the option's YAML
  (``conf/model/<group>/<option>.yaml``, under ``options.<option>``), reach the network as
  ``model.options.<option>`` and are checked by the one unknown-key check
  (:func:`~transformer_lab.config.typed.from_settings`) in
  :class:`~transformer_lab.model.config.TransformerConfig`, which saves them in the
  checkpoint. An option that declares none takes none.

The positional encodings and the FFNs are options, by their base classes.
"""

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class Stack:
    """Where an option sits: the stack's name and whether it attends causally."""

    name: str
    causal: bool


ENCODER = Stack("encoder", causal=False)
DECODER = Stack("decoder", causal=True)


class Option:
    """A registered option built into a stack: :meth:`place` keeps the ``stack`` it was
    told and its ``settings`` (None: its ``Settings`` defaults, or None if it declares
    none). Built alone (a test of the option itself), it sits in an encoder."""

    Settings: ClassVar[type | None] = None  # a frozen dataclass of its own settings

    def place(self, stack: Stack, settings) -> None:
        self.stack = stack
        if settings is None and self.Settings is not None:
            settings = self.Settings()
        self.settings = settings


def settings_class(cls: type | None) -> type | None:
    """The ``Settings`` that the option class ``cls`` declares, or None (none declared, or
    no :class:`Option`, which is given none)."""
    return cls.Settings if isinstance(cls, type) and issubclass(cls, Option) else None


def built(cls: type, *sizes, stack: Stack, settings=None):
    """``cls`` built from its ``sizes``, and if it is an :class:`Option`, told its ``stack``
    and given its own ``settings`` (None: its defaults)."""
    if isinstance(cls, type) and issubclass(cls, Option):
        return cls(*sizes, stack=stack, settings=settings)
    return cls(*sizes)
