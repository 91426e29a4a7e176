"""Seeds until decided: the design of a sweep that runs its grid in stages of seeds and
judges its hypotheses after each (the sweeper ``hydra/sweeper=sequential``,
``hydra_plugins/transformer_lab_sequential``).

A sweep that looks several times and stops where it sees a difference would, judged at a
fixed level at every look, find a false difference far more often than that level. So the
number of looks K is fixed before the first job (``first`` seeds per configuration, then
doubled, up to ``budget``: 4, 8, 16 gives K = 3) and the family-wise level is split
between them, ``level / K`` at each look (Holm across both directions of every hypothesis
within a look, :mod:`transformer_lab.report.family`). By the union bound the chance of any
false verdict, ``supported`` or ``contradicted``, at any look stays at the level, however
the looks depend on each other. This is conservative: Pocock's or O'Brien–Fleming's
boundaries spend less, but they hold for normal statistics, not for exact tests on a few
runs. A look whose seeds cannot pass Holm's first step decides nothing
(:mod:`transformer_lab.sweep.design`), and the sweeper adds seeds. The simulation in
tests/report/test_sequential_error_rate.py checks the rate of any false verdict on the
lab's own tests (600 sweeps at 4, 8, 16 seeds: 4.2%).
"""

from dataclasses import dataclass

from omegaconf import DictConfig

from transformer_lab.config.jobs import SEQUENTIAL_SWEEPER
from transformer_lab.config.validation import InvalidSetting, check_integer, check_number

LEVEL = 0.05  # family-wise, per sweep
FILE = "sequential.json"  # the design, in the sweep folder, for the report


@dataclass(frozen=True)
class SequentialDesign:
    """Seeds per configuration at each look: ``first``, then doubled, up to ``budget``
    (``first=4, budget=16``: looks after 4, 8 and 16 seeds); each look at ``level / K``;
    the seeds ``first_seed``, ``first_seed + 1``, ..., in that order."""

    first: int = 4
    budget: int = 16
    level: float = LEVEL
    first_seed: int = 0

    def __post_init__(self):
        check_integer("hydra.sweeper.first", self.first, minimum=3)  # a verdict needs 3
        if isinstance(self.budget, bool) or not isinstance(self.budget, int):
            raise InvalidSetting(
                "hydra.sweeper.budget", self.budget, "not an integer", "an integer"
            )
        if self.budget < self.first:
            allowed = f"an integer >= hydra.sweeper.first={self.first}"
            reason = "below the first stage"
            raise InvalidSetting("hydra.sweeper.budget", self.budget, reason, allowed)
        check_number("hydra.sweeper.level", self.level, above=0, below=1)
        check_integer("hydra.sweeper.first_seed", self.first_seed, minimum=0)

    @classmethod
    def of_sweeper(cls, sweeper: DictConfig) -> "SequentialDesign":
        return cls(sweeper.first, sweeper.budget, sweeper.level, sweeper.first_seed)

    @property
    def stages(self) -> list[int]:
        """The seeds per configuration after each look, ``[4, 8, 16]``."""
        stages = [self.first]
        while stages[-1] < self.budget:
            stages.append(min(2 * stages[-1], self.budget))
        return stages

    @property
    def seeds(self) -> list[int]:
        return list(range(self.first_seed, self.first_seed + self.budget))

    @property
    def level_per_look(self) -> float:
        return self.level / len(self.stages)

    def record(self, seed_key: str) -> dict:
        """What ``sequential.json`` holds."""
        return {
            "first": self.first,
            "budget": self.budget,
            "level": self.level,
            "first_seed": self.first_seed,
            "seed_key": seed_key,
            "seeds": self.seeds,
            "stages": self.stages,
            "level_per_look": self.level_per_look,
        }


def is_sequential(hydra_cfg: DictConfig) -> bool:
    return hydra_cfg.sweeper.get("_target_") == SEQUENTIAL_SWEEPER


def check_sequential(config: DictConfig, has_hypotheses: bool) -> None:
    """A sequential sweep's design, and that it has hypotheses to decide and leaves the
    seeds to the sweeper (InvalidSetting otherwise)."""
    sweeper = config.hydra.sweeper
    SequentialDesign.of_sweeper(sweeper)
    if not has_hypotheses:
        reason = "a sequential sweep adds seeds until its hypotheses are decided; none stated"
        allowed = "an experiment with hypotheses, or hydra/sweeper=basic"
        raise InvalidSetting("hydra.sweeper", "sequential", reason, allowed)
    seed_key = sweeper.seed_key
    given = [*(sweeper.params or {}), *(o.split("=", 1)[0] for o in config.hydra.overrides.task)]
    if any(key.lstrip("+~") == seed_key for key in given):
        reason = "the sequential sweeper chooses the seeds"
        allowed = f"no {seed_key} override; hydra.sweeper.first_seed=<n> to start elsewhere"
        raise InvalidSetting(seed_key, "given", reason, allowed)
