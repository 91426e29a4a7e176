"""BLEU and chrF of a split are sacrebleu's corpus scores of all its texts, however the split
was batched; BLEU takes the n-gram orders the outputs hold (sacrebleu's effective order),
which is corpus BLEU wherever they hold 4-grams, and says how many it took."""

import pytest
from sacrebleu.metrics import BLEU, CHRF

from transformer_lab.training.text_metrics import TextMetrics, short_outputs_note, signatures

HYPOTHESES = ["the cat sat on the mat", "a dog", "it rains today", "hello world"]
REFERENCES = ["the cat sat on a mat", "a dog barked", "it rains today", "goodbye world"]


def test_the_scores_are_sacrebleus_corpus_scores_of_every_batch_together():
    metrics = TextMetrics()
    metrics.update(HYPOTHESES[:1], REFERENCES[:1])  # batches of 1 and 3
    metrics.update(HYPOTHESES[1:], REFERENCES[1:])
    scores = metrics.compute()
    # the outputs hold 4-grams: the effective order is corpus BLEU's own number
    assert scores["bleu"] == BLEU().corpus_score(HYPOTHESES, [REFERENCES]).score
    lowercased = BLEU(lowercase=True).corpus_score(HYPOTHESES, [REFERENCES]).score
    assert scores["bleu_lc"] == lowercased
    assert scores["chrf"] == CHRF().corpus_score(HYPOTHESES, [REFERENCES]).score
    assert 0 < scores["bleu"] < 100 and 0 < scores["chrf"] < 100
    assert scores["bleu_order"] == 4


def test_perfect_outputs_score_100_and_reset_empties_the_split():
    metrics = TextMetrics()
    metrics.update(REFERENCES, REFERENCES)
    assert metrics.compute() == {
        "bleu": pytest.approx(100.0),
        "bleu_lc": pytest.approx(100.0),
        "chrf": pytest.approx(100.0),
        "bleu_order": 4.0,
    }
    metrics.reset()
    assert len(metrics) == 0


def test_mismatched_lengths_are_refused():
    with pytest.raises(ValueError, match="2 hypotheses for 1 references"):
        TextMetrics().update(["a", "b"], ["a"])


def test_the_signatures_name_one_reference_the_tokenizer_and_the_order_taken():
    assert signatures(effective_order=True)["bleu"].startswith("nrefs:1|case:mixed|eff:yes|")
    assert signatures() == {
        "bleu": "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:"
        + signatures()["bleu"].rpartition(":")[2],
        "bleu_lc": "nrefs:1|case:lc|eff:no|tok:13a|smooth:exp|version:"
        + signatures()["bleu"].rpartition(":")[2],
        "chrf": "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:"
        + signatures()["chrf"].rpartition(":")[2],
    }


def test_one_word_outputs_mostly_right_score_their_1_gram_bleu_not_0():
    """The issue's case: 3 of 4 one-word targets right. Corpus BLEU of 4-grams is 0.0 (no
    output has a 2-gram); over the one order they hold, it is their 1-gram precision."""
    words, targets = ["cat", "dog", "fish", "bird"], ["cat", "dog", "fish", "cow"]
    assert BLEU().corpus_score(words, [targets]).score == 0.0
    metrics = TextMetrics()
    metrics.update(words, targets)
    scores = metrics.compute()
    assert scores["bleu"] == pytest.approx(75.0)
    assert scores["bleu_order"] == 1


def test_three_word_outputs_take_three_orders():
    metrics = TextMetrics()
    metrics.update(["the red cat", "a big dog"], ["the red cat", "a small dog"])
    scores = metrics.compute()
    assert scores["bleu_order"] == 3
    expected = BLEU(max_ngram_order=3).corpus_score(
        ["the red cat", "a big dog"], [["the red cat", "a small dog"]]
    )
    assert scores["bleu"] == pytest.approx(expected.score)


def test_evaluate_notes_each_split_whose_bleu_took_fewer_orders():
    assert short_outputs_note({"test/bleu_order": 4.0, "test/bleu": 30.0}) is None
    note = short_outputs_note({"test/bleu_order": 1.0, "test_long/bleu_order": 3.0})
    assert note.startswith(
        "note: test/bleu of 1-gram precisions; test_long/bleu of 1- to 3-gram precisions only"
    )
    assert note.endswith("compare chrf, not the papers' BLEU")


def test_lowercased_bleu_counts_a_word_that_differs_only_in_case_as_right():
    metrics = TextMetrics()
    metrics.update(["A man rides a Horse ."], ["a man rides a horse ."])
    scores = metrics.compute()
    assert scores["bleu_lc"] == pytest.approx(100.0)
    assert (
        scores["bleu"]
        == BLEU(effective_order=True)
        .corpus_score(["A man rides a Horse ."], [["a man rides a horse ."]])
        .score
        < 50
    )
