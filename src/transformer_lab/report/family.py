"""One error rate per sweep: the hypotheses an experiment states are judged together.

Each hypothesis has its one-sided p-value in the direction it predicted; judged each at 5%
on its own, three or four of them would let a false ``supported`` through far more often
than 1 in 20. Holm's step-down method holds the chance of any false ``supported`` among
a sweep's hypotheses at the level (family-wise), for any dependence between them, and
rejects at least what Bonferroni's does. Benjamini–Hochberg's false discovery rate would
be weaker than a reader of a short list of pre-registered claims assumes each verdict to
be, so the lab does not use it. ``contradicted`` is judged the same way on the p-values of
the other direction, a family of its own.

A sweep that looks at its hypotheses several times as seeds arrive splits the level
between its looks (:class:`transformer_lab.sweep.sequential.SequentialDesign`).
"""

from collections.abc import Sequence


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's adjusted p-values, in the order given: the i-th smallest p times (m - i + 1),
    never below an earlier one's, at most 1; a hypothesis is rejected at level a when its
    adjusted p-value is at most a."""
    m = len(p_values)
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda j: p_values[j])):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
