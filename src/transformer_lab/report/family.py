"""One error rate per sweep: the verdicts an experiment's hypotheses get are judged together.

Each hypothesis is two one-sided tests, one whose rejection reads ``supported`` and one
whose rejection reads ``contradicted`` (:mod:`.verdicts`). Judged each at 5% on its own,
a sweep of three rules would let a false verdict through far more often than 1 in 20,
and even one rule would twice over: where nothing differs, either direction comes out at
5%, 9.7% of 3-seed sweeps in all. So the 2k p-values of a sweep's k rules are one family,
and Holm's step-down method holds the chance of any false verdict among them, of either
kind, at the level (family-wise, for any dependence between them); it rejects at least
what Bonferroni's does. Its first step, the smallest p-value times 2k, is what a design
must be able to reach at all (one rule: a one-sided p of 0.025, the two-sided test at 5%).
Benjamini–Hochberg's false discovery rate would be weaker than a reader of a short list
of pre-registered claims assumes each verdict to be, so the lab does not use it.

A sweep that looks at its hypotheses several times as seeds arrive splits the level
between its looks (:class:`transformer_lab.sweep.sequential.SequentialDesign`); the lab's
bundled hypotheses are judged together once more across sweeps (:mod:`.lab`).
"""

from collections.abc import Sequence


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's adjusted p-values, in the order given: the i-th smallest p times (m - i + 1),
    never below an earlier one's, at most 1; a hypothesis is rejected at level a when its
    adjusted p-value is at most a.

    The numbers are statsmodels' ``multipletests(method="holm")`` (pinned by
    tests/report/test_family.py on random families), written out here on purpose:
    statsmodels' Holm branch calls ``gc.collect()`` on every call (statsmodels PR #8671,
    closed unmerged), 0.2 s in a process that has torch loaded, and the lab adjusts a
    family at every look of a sequential sweep and in every simulated sweep of its
    error-rate test."""
    m = len(p_values)
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda j: p_values[j])):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
