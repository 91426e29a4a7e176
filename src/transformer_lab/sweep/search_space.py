"""``hparams_search=optuna``: the warmups a study searches follow the length of its runs.

``range(0, 600, step=50)`` in a study of 200-step runs tries warmups past the end of
training, where the learning rate never reaches its peak. So the bundled search space draws
``model.warmup_steps`` from ``${warmup_range:${trainer.max_steps}}`` (:func:`warmup_range`:
0 to half the run), and :func:`check_warmup_range` refuses, before the first trial (the
sweep's config check, :mod:`.config_check`), a space (one typed on the command line, say)
that reaches ``trainer.max_steps``. Both read the space
as the Optuna sweeper builds it, with the plugin's own parser, which makes the end of a
``range`` one of its values (an ``IntUniformDistribution`` includes its ``high``).
"""

from hydra_plugins.hydra_optuna_sweeper._impl import create_params_from_overrides
from omegaconf import DictConfig, OmegaConf
from optuna.distributions import BaseDistribution, CategoricalDistribution

from transformer_lab.config.validation import ConfigError

WARMUP_KEY = "model.warmup_steps"
POINTS = 10  # warmups tried: 0 and ten steps up to half the run


def warmup_range(max_steps: int) -> str:
    """``range(0, end, step=s)``: warmups from 0 to half of ``max_steps``, end included (as
    the plugin reads a range), in :data:`POINTS` steps of at least 1."""
    half = max_steps // 2
    step = max(1, half // POINTS)
    return f"range(0, {half - half % step}, step={step})"


def search_arguments(config: DictConfig) -> list[str]:
    """What the Optuna sweeper parses: ``hydra.sweeper.params``, then the command line."""
    params = config.hydra.sweeper.get("params") or {}
    return [f"{key}={value}" for key, value in params.items()] + list(config.hydra.overrides.task)


def search_space(config: DictConfig) -> dict[str, BaseDistribution]:
    """The distributions the Optuna sweeper of the multirun ``config`` (with its ``hydra``
    node) searches: a key the command line fixes to one value is searched no more."""
    distributions, fixed = create_params_from_overrides(search_arguments(config))
    return {key: d for key, d in distributions.items() if key not in fixed}


def largest(distribution: BaseDistribution) -> float | None:
    """The largest value ``distribution`` can draw; None for a choice of non-numbers."""
    if isinstance(distribution, CategoricalDistribution):
        numbers = [c for c in distribution.choices if isinstance(c, int | float)]
        return max(numbers, default=None)
    return distribution.high


def check_warmup_range(config: DictConfig) -> None:
    """Raise ConfigError if the searched ``model.warmup_steps`` reach ``trainer.max_steps``."""
    distribution = search_space(config).get(WARMUP_KEY)
    top = largest(distribution) if distribution is not None else None
    max_steps = config.trainer.max_steps
    if top is not None and top >= max_steps:
        typed = [a for a in search_arguments(config) if a.startswith(f"{WARMUP_KEY}=")][-1]
        raise ConfigError(
            f"{typed} searches warmups up to {top:g}, not below trainer.max_steps={max_steps}; "
            f"allowed: warmups below trainer.max_steps, e.g. {WARMUP_KEY}="
            f"{warmup_range(max_steps)} (0 to half the run, the default)"
        )


OmegaConf.register_new_resolver("warmup_range", warmup_range, replace=True)
