"""Sample generations as TensorBoard text (the TEXT tab; a W&B table), at every validation
and at the test: a table source | target | prediction whose first wrong token is bold, so
a reader sees *where* a model goes wrong, and how that changes over training.

The examples are the split's first ``pool_size`` (always the same ones, see
``SyntheticDataModule.sample``), decoded greedily; the table shows ``num_examples`` of
them, wrong ones first when there are any. Tags: ``samples/val``, ``samples/test``,
``samples/test_long``.
"""

from collections.abc import Callable

import lightning as L
import torch

from transformer_lab.callbacks.logger_kinds import log_table
from transformer_lab.config.validation import check_integer
from transformer_lab.tokens import EOS, detokenize

COLUMNS = ["source", "target", "prediction"]
END = "⟨end⟩"  # the end of sequence, where it is the first wrong token
Decode = Callable[[list[int]], str]


def _words(ids: list[int], decode: Decode) -> list[str]:
    """Content words up to EOS, then :data:`END` if the sequence has an EOS."""
    words = _cell(decode(ids)).split()
    return [*words, END] if EOS in ids else words


def _cell(text: str) -> str:
    """``text`` as a markdown table cell: a ``|`` of the data's own text escaped."""
    return text.replace("|", "\\|")


def sample_row(
    src: list[int],
    target: list[int],
    predicted: list[int],
    src_text: Decode = detokenize,
    tgt_text: Decode = detokenize,
) -> tuple[list[str], bool]:
    """``([source, target, prediction], correct)`` as markdown cells; the prediction's
    first word that differs from the target is bold (:data:`END` if it stopped early).
    ``src_text``/``tgt_text`` decode ids to text (the data's codecs; for the synthetic
    tasks numbers, where a word is a token)."""
    want, got = _words(target, tgt_text), _words(predicted, tgt_text)
    cells = [_cell(src_text(src)), _cell(tgt_text(target))]
    if want == got:
        return [*cells, _cell(tgt_text(predicted))], True
    wrong = next(
        i for i in range(len(got) + 1) if i == len(got) or i == len(want) or got[i] != want[i]
    )
    shown = got if wrong < len(got) else [*got, "…"]  # "…": cut off at the length limit
    shown[wrong] = f"**{shown[wrong]}**"
    return [*cells, " ".join(word for word in shown if word != END)], False


def sample_table(rows: list[tuple[list[str], bool]]) -> str:
    """The markdown TensorBoard renders: a one-line count, then the table."""
    wrong = sum(not correct for _, correct in rows)
    lines = [
        f"{wrong} of {len(rows)} wrong; the first wrong token is bold.",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|---" * len(COLUMNS) + "|",
    ]
    lines += ["| " + " | ".join(cells) + " |" for cells, _ in rows]
    return "\n".join(lines)


class SampleGenerations(L.Callback):
    def __init__(self, num_examples: int = 8, pool_size: int = 64):
        check_integer("pool_size", pool_size, minimum=1)
        check_integer("num_examples", num_examples, minimum=1, maximum=pool_size)
        self.num_examples, self.pool_size = num_examples, pool_size

    def on_validation_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if not trainer.sanity_checking:
            self._log(trainer, pl_module, "val")

    def on_test_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        for split in trainer.datamodule.test_split_names:
            self._log(trainer, pl_module, split)

    def _log(self, trainer: L.Trainer, pl_module: L.LightningModule, split: str) -> None:
        if not trainer.is_global_zero:
            return
        batch = trainer.datamodule.sample(split, self.pool_size)
        src, tgt_out = batch["src"], batch["tgt_out"]  # [B, S], [B, T]
        with torch.no_grad():
            predicted = pl_module.model.generate(src.to(pl_module.device), tgt_out.size(1))
        data = trainer.datamodule
        rows = [
            sample_row(
                s.tolist(), t.tolist(), p.tolist(), data.src_codec.decode, data.tgt_codec.decode
            )
            for s, t, p in zip(src, tgt_out, predicted[:, 1:].cpu(), strict=True)
        ]
        rows = sorted(rows, key=lambda row: row[1])[: self.num_examples]  # stable: wrong first
        cells = [cells for cells, _ in rows]
        markdown = sample_table(rows)
        log_table(trainer, f"samples/{split}", COLUMNS, cells, markdown, trainer.global_step)
