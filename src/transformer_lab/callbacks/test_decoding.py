"""How a run's closing test decodes: beam search instead of greedy decoding, for the test
splits only (``callbacks.test_decoding``; experiment=multi30k_base sets it).

Validations during training stay greedy (cheap, and what the learning curve compares); the
final test is the number a translation run reports, which the field measures with beam
search. The module's ``beam_size``/``length_penalty`` (what ``evaluate`` sets for its beam
column) are set when the test starts and restored when it ends, so ``seq_acc``, ``bleu``,
``bleu_lc`` and ``chrf`` of ``test/`` in ``metrics.json`` are the beam's; the oracle-length
metrics stay greedy.
"""

import lightning as L

from transformer_lab.config.validation import InvalidSetting, check_integer, check_number
from transformer_lab.model.decoding import check_beam_search


class TestDecoding(L.Callback):
    """The run's test decodes by a ``beam_size`` beam with GNMT's ``length_penalty``."""

    __test__ = False  # a callback, not a pytest class

    def __init__(self, beam_size: int = 5, length_penalty: float = 1.0):
        check_integer("beam_size", beam_size, minimum=1)
        check_number("length_penalty", length_penalty, minimum=0)
        self.beam_size, self.length_penalty = beam_size, length_penalty
        self._before: tuple[int, float] | None = None

    def setup(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        """The beam must fit the model's vocabulary: refused before the fit, not after it."""
        try:
            check_beam_search(pl_module.model, self.beam_size, self.length_penalty)
        except ValueError as error:
            raise InvalidSetting(
                "beam_size", self.beam_size, str(error), "a smaller beam"
            ) from None

    def on_test_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._before = (pl_module.beam_size, pl_module.length_penalty)
        pl_module.beam_size, pl_module.length_penalty = self.beam_size, self.length_penalty

    def on_test_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if self._before is not None:
            pl_module.beam_size, pl_module.length_penalty = self._before
            self._before = None
