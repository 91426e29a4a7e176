"""Optuna's TPE sampler whose random draws for a trial follow from the seed and the trial's
number, not from the worker that draws it.

A seeded sampler in each of several workers would draw the same first trials in all of
them (the same random start, then the same model of the same trials), and a study
continued by the same command would draw its first trials' parameters again. The trial
numbers are the storage's, unique across the study's workers; seeding each trial's draws
with ``seed + number`` gives every trial its own draws, the same ones for the same trial
number whichever worker runs it, so that a study run by one worker stays reproducible.
"""

import numpy as np
import optuna
from optuna.samplers import TPESampler


class TrialSeededTPE(TPESampler):
    """:class:`~optuna.samplers.TPESampler` (same settings) whose random state is
    ``seed + trial.number`` when it starts drawing for a trial; unseeded without ``seed``.
    Optuna 2.10 (pinned by the Hydra plugin) keeps that state in ``_rng`` and in its random
    sampler's ``_rng``, which draws the random startup trials."""

    def __init__(self, seed: int | None = None, **settings) -> None:
        super().__init__(seed=seed, **settings)
        self._seed = seed
        self._seeded_for: int | None = None  # the trial the random state was set for

    def _seed_for(self, trial: optuna.trial.FrozenTrial) -> None:
        if self._seed is None or self._seeded_for == trial.number:
            return
        self._seeded_for = trial.number
        self._rng = np.random.RandomState(self._seed + trial.number)
        self._random_sampler._rng = np.random.RandomState(self._seed + trial.number)

    def infer_relative_search_space(self, study, trial):
        self._seed_for(trial)
        return super().infer_relative_search_space(study, trial)

    def sample_relative(self, study, trial, search_space):
        self._seed_for(trial)
        return super().sample_relative(study, trial, search_space)

    def sample_independent(self, study, trial, param_name, param_distribution):
        self._seed_for(trial)
        return super().sample_independent(study, trial, param_name, param_distribution)
