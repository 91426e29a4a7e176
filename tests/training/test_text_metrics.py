"""BLEU and chrF of a split are sacrebleu's corpus scores of all its texts, however the split
was batched."""

import pytest
from sacrebleu.metrics import BLEU, CHRF

from transformer_lab.training.text_metrics import TextMetrics, signatures

HYPOTHESES = ["the cat sat on the mat", "a dog", "it rains today", "hello world"]
REFERENCES = ["the cat sat on a mat", "a dog barked", "it rains today", "goodbye world"]


def test_the_scores_are_sacrebleus_corpus_scores_of_every_batch_together():
    metrics = TextMetrics()
    metrics.update(HYPOTHESES[:1], REFERENCES[:1])  # batches of 1 and 3
    metrics.update(HYPOTHESES[1:], REFERENCES[1:])
    scores = metrics.compute()
    assert scores["bleu"] == BLEU().corpus_score(HYPOTHESES, [REFERENCES]).score
    lowercased = BLEU(lowercase=True).corpus_score(HYPOTHESES, [REFERENCES]).score
    assert scores["bleu_lc"] == lowercased
    assert scores["chrf"] == CHRF().corpus_score(HYPOTHESES, [REFERENCES]).score
    assert 0 < scores["bleu"] < 100 and 0 < scores["chrf"] < 100


def test_perfect_outputs_score_100_and_reset_empties_the_split():
    metrics = TextMetrics()
    metrics.update(REFERENCES, REFERENCES)
    assert metrics.compute() == {
        "bleu": pytest.approx(100.0),
        "bleu_lc": pytest.approx(100.0),
        "chrf": pytest.approx(100.0),
    }
    metrics.reset()
    assert len(metrics) == 0


def test_mismatched_lengths_are_refused():
    with pytest.raises(ValueError, match="2 hypotheses for 1 references"):
        TextMetrics().update(["a", "b"], ["a"])


def test_the_signatures_name_one_reference_and_the_tokenizer():
    assert signatures() == {
        "bleu": "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:"
        + signatures()["bleu"].rpartition(":")[2],
        "bleu_lc": "nrefs:1|case:lc|eff:no|tok:13a|smooth:exp|version:"
        + signatures()["bleu"].rpartition(":")[2],
        "chrf": "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:"
        + signatures()["chrf"].rpartition(":")[2],
    }


def test_lowercased_bleu_counts_a_word_that_differs_only_in_case_as_right():
    metrics = TextMetrics()
    metrics.update(["A man rides a Horse ."], ["a man rides a horse ."])
    scores = metrics.compute()
    assert scores["bleu_lc"] == pytest.approx(100.0)
    assert (
        scores["bleu"]
        == BLEU().corpus_score(["A man rides a Horse ."], [["a man rides a horse ."]]).score
        < 50
    )
