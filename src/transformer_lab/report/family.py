"""One error rate per sweep: the hypotheses an experiment states are judged together.

Each hypothesis has its one-sided p-value in the direction it predicted; judged each at 5%
on its own, three or four of them would let a false ``supported`` through far more often
than 1 in 20. Holm's step-down method holds the chance of any false ``supported`` among
a sweep's hypotheses at the level (family-wise), for any dependence between them, and
rejects at least what Bonferroni's does. Benjamini–Hochberg's false discovery rate would
be weaker than a reader of a short list of pre-registered claims assumes each verdict to
be, so the lab does not use it. ``contradicted`` is judged the same way on the p-values of
the other direction, a family of its own.

A sweep that looks at its hypotheses several times as seeds arrive (the sequential sweeper,
``hydra_plugins/transformer_lab_sequential``) splits the level between its looks
(:class:`SequentialDesign`): a fixed number of looks K, each at level / K, so that by the
union bound the chance of a false verdict at any look stays at the level however the looks
depend on each other. It is conservative (Pocock's or O'Brien–Fleming's boundaries spend
less, but hold only for normal statistics, not for exact tests on counts), and simple
enough to check by simulation (tests/report/test_sequential_error_rate.py).
"""

from collections.abc import Sequence
from dataclasses import dataclass

from transformer_lab.config.validation import InvalidSetting, check_integer, check_number

LEVEL = 0.05  # family-wise, per sweep


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


@dataclass(frozen=True)
class SequentialDesign:
    """Seeds per configuration at each look: ``first``, then doubled, up to ``budget``
    (``first=4, budget=16``: looks after 4, 8 and 16 seeds); each look at ``level / K``."""

    first: int
    budget: int
    level: float = LEVEL

    def __post_init__(self):
        check_integer("hydra.sweeper.first", self.first, minimum=3)  # a verdict needs 3
        if not isinstance(self.budget, int) or self.budget < self.first:
            allowed = f"an integer >= hydra.sweeper.first={self.first}"
            raise InvalidSetting(
                "hydra.sweeper.budget", self.budget, "below the first stage", allowed
            )
        check_number("hydra.sweeper.level", self.level, above=0, below=1)

    @property
    def stages(self) -> list[int]:
        """The seeds per configuration after each look, ``[4, 8, 16]``."""
        stages = [self.first]
        while stages[-1] < self.budget:
            stages.append(min(2 * stages[-1], self.budget))
        return stages

    @property
    def level_per_look(self) -> float:
        return self.level / len(self.stages)
