"""``hydra.sweeper._target_`` of ``hparams_search=optuna``: the sweeper of a study that
several workers share (:mod:`transformer_lab.sweep.shared_study`).

Hydra imports every module of ``hydra_plugins`` at every start, a plain run's too; so this
one imports Hydra alone, and Optuna (the ``[tune]`` extra) only when a study starts, as the
Optuna plugin does.
"""

from hydra.plugins.sweeper import Sweeper
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig


class SharedStudySweeper(Sweeper):
    """Takes the Optuna plugin's settings (its config's schema) and runs
    :class:`transformer_lab.sweep.shared_study.SharedStudy`."""

    def __init__(self, **settings) -> None:
        from transformer_lab.sweep.shared_study import SharedStudy  # Optuna's stack

        self.sweeper = SharedStudy(**settings)

    def setup(
        self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig
    ) -> None:
        self.sweeper.setup(hydra_context=hydra_context, task_function=task_function, config=config)

    def sweep(self, arguments: list[str]) -> None:
        return self.sweeper.sweep(arguments)
