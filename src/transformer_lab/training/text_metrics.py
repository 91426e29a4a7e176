"""BLEU and chrF of a split's decoded outputs, from ``sacrebleu``: what ``data=pairs`` reports
beside loss and accuracies.

The hypotheses are the model's outputs decoded to text by the data's target tokenizer, the
references the targets as the file wrote them; both are scored as corpora with sacrebleu
(BLEU: 13a tokenization, up to 4-grams, exponential smoothing; chrF: character 6-grams,
beta 2), whose signatures :func:`signatures` gives, so that the numbers compare with any
other sacrebleu score of the same signature. Scores are on sacrebleu's 0-100 scale.

BLEU is the geometric mean of the 1- to 4-gram precisions: outputs of one to three words
hold no 4-gram, and corpus BLEU is 0 for them however many are exactly right (93% of
one-word targets right scored 0.0). So where the outputs hold no 4-gram, BLEU takes
sacrebleu's effective order (``effective_order=True``, ``eff:yes`` in its signature): the
mean over the orders they hold, and ``<split>/bleu_order`` (in ``metrics.json``,
``eval.json`` and TensorBoard) says how many: below 4, BLEU is not the BLEU of papers, and
chrF is the score to compare. Where they hold 4-grams (any real translation), BLEU is
corpus BLEU as published (``eff:no``), ``bleu_order`` 4.

``bleu`` is cased, on detokenised text (the field's number, WMT's). ``bleu_lc`` is the same
with ``lowercase=True`` (signature ``case:lc``): what tutorials on Multi30k report
(lowercased text), so their numbers compare with the lab's; it is never below ``bleu`` on
the same outputs, often a point or two above.

A corpus score is not a sum over batches, so the texts are kept until the split ends and
then, under DDP, gathered from every rank before scoring.
"""

import itertools

import torch.distributed as dist
from sacrebleu.metrics import BLEU, CHRF

NAMES = ("bleu", "bleu_lc", "chrf")
ORDER = "bleu_order"  # the n-gram orders BLEU was taken over (4: corpus BLEU as published)


def scorers(effective_order: bool = False) -> dict:
    """Each metric's sacrebleu scorer, by name; BLEU at its effective order where asked
    (outputs without 4-grams: above)."""
    return {
        "bleu": BLEU(effective_order=effective_order),
        "bleu_lc": BLEU(lowercase=True, effective_order=effective_order),
        "chrf": CHRF(),
    }


def effective(metrics: dict) -> bool:
    """Whether any split of ``metrics`` took BLEU at fewer than 4 orders (its effective
    order): its signature then says ``eff:yes``."""
    return any(v < 4 for k, v in metrics.items() if k.endswith(f"/{ORDER}"))


def signatures(effective_order: bool = False) -> dict[str, str]:
    """sacrebleu's signature of each metric (one reference per hypothesis): what makes two
    scores comparable."""
    metrics = scorers(effective_order)
    for metric in metrics.values():
        metric.corpus_score(["a"], [["a"]])  # the signature counts the references scored
    return {name: str(metric.get_signature()) for name, metric in metrics.items()}


class TextMetrics:
    """The hypotheses and references of one split, and their BLEU and chrF."""

    def __init__(self):
        self.hypotheses: list[str] = []
        self.references: list[str] = []

    def __len__(self) -> int:
        return len(self.hypotheses)

    def update(self, hypotheses: list[str], references: list[str]) -> None:
        if len(hypotheses) != len(references):
            raise ValueError(f"{len(hypotheses)} hypotheses for {len(references)} references")
        self.hypotheses += hypotheses
        self.references += references

    def compute(self) -> dict[str, float]:
        """``bleu``, ``bleu_lc`` and ``chrf`` of every rank's texts together, and
        ``bleu_order``: the n-gram orders BLEU averaged over, those the outputs hold (up to
        4)."""
        hypotheses, references = self.hypotheses, self.references
        if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
            gathered = [None] * dist.get_world_size()
            dist.all_gather_object(gathered, (hypotheses, references))
            hypotheses = [h for ranks, _ in gathered for h in ranks]
            references = [r for _, ranks in gathered for r in ranks]
        totals = BLEU().corpus_score(hypotheses, [references]).totals
        order = sum(1 for _ in itertools.takewhile(lambda total: total > 0, totals))
        scores = {
            name: scorer.corpus_score(hypotheses, [references])
            for name, scorer in scorers(effective_order=order < 4).items()
        }
        return {name: score.score for name, score in scores.items()} | {ORDER: float(order)}

    def reset(self) -> None:
        self.hypotheses, self.references = [], []


def short_outputs_note(metrics: dict[str, float]) -> str | None:
    """A line naming each split whose BLEU took fewer than 4 n-gram orders (the
    ``<split>/bleu_order`` of ``metrics``), for evaluate's output; None where there is none."""
    short = [
        (key.removesuffix(f"/{ORDER}"), int(value))
        for key, value in metrics.items()
        if key.endswith(f"/{ORDER}") and 0 < value < 4
    ]
    if not short:
        return None
    grams = {1: "1-gram", 2: "1- and 2-gram", 3: "1- to 3-gram"}
    splits = "; ".join(f"{split}/bleu of {grams[order]} precisions" for split, order in short)
    return (
        f"note: {splits} only (sacrebleu's effective order): the outputs hold no longer "
        "n-grams, and corpus BLEU of 4-grams would be 0; compare chrf, not the papers' BLEU"
    )
