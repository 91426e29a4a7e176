"""What a registered option of the network is given besides its sizes: the stack it sits in,
and settings of its own.

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
