"""BLEU and chrF of a split's decoded outputs, from ``sacrebleu``: what ``data=pairs`` reports
beside loss and accuracies.

The hypotheses are the model's outputs decoded to text by the data's target tokenizer, the
references the targets as the file wrote them; both are scored as corpora with sacrebleu's
defaults (BLEU: 13a tokenization, 4-grams, exponential smoothing; chrF: character 6-grams,
beta 2), whose signatures :func:`signatures` gives, so that the numbers compare with any
other sacrebleu score of the same signature. Scores are on sacrebleu's 0-100 scale.

``bleu`` is the standard score: cased, on detokenised text (the field's number, WMT's).
``bleu_lc`` is the same with ``lowercase=True`` (signature ``case:lc``): what tutorials on
Multi30k report (lowercased text), so their numbers compare with the lab's; it is never
below ``bleu`` on the same outputs, often a point or two above.

A corpus score is not a sum over batches, so the texts are kept until the split ends and
then, under DDP, gathered from every rank before scoring.
"""

import torch.distributed as dist
from sacrebleu.metrics import BLEU, CHRF

NAMES = ("bleu", "bleu_lc", "chrf")


def scorers() -> dict:
    """Each metric's sacrebleu scorer, by name."""
    return {"bleu": BLEU(), "bleu_lc": BLEU(lowercase=True), "chrf": CHRF()}


def signatures() -> dict[str, str]:
    """sacrebleu's signature of each metric (one reference per hypothesis): what makes two
    scores comparable."""
    metrics = scorers()
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
        """``bleu``, ``bleu_lc`` and ``chrf`` of every rank's texts together."""
        hypotheses, references = self.hypotheses, self.references
        if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
            gathered = [None] * dist.get_world_size()
            dist.all_gather_object(gathered, (hypotheses, references))
            hypotheses = [h for ranks, _ in gathered for h in ranks]
            references = [r for _, ranks in gathered for r in ranks]
        return {
            name: scorer.corpus_score(hypotheses, [references]).score
            for name, scorer in scorers().items()
        }

    def reset(self) -> None:
        self.hypotheses, self.references = [], []
