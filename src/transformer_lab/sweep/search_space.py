"""``hparams_search=optuna``: the warmups a study searches follow the length of its runs.

``range(0, 600, step=50)`` in a study of 200-step runs tries warmups past the end of
training, where the learning rate never reaches its peak. So the bundled search space draws
``optim.warmup_steps`` from ``${warmup_range:${trainer.max_steps}}`` (:func:`warmup_range`:
0 to half the run), and :func:`check_warmup_range` refuses, before the first trial (the
sweep's config check, :mod:`.config_check`), a space (one typed on the command line, say)
that reaches ``trainer.max_steps``. Both read the space as the Optuna sweeper does, parsed
by Hydra's override parser: the sweeper makes a ``range`` an Optuna int (or discrete)
distribution, whose ``high`` is included, so the end of a range is one of its values
(unless shuffled: then the range's own values are the choices). The plugin's function for
this sits in its private ``_impl``; a test holds :func:`largest` to it.
"""

from decimal import Decimal

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from omegaconf import DictConfig, OmegaConf

from transformer_lab.config.validation import ConfigError

WARMUP_KEY = "optim.warmup_steps"
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


def search_space(config: DictConfig) -> dict[str, Override]:
    """The sweep overrides that the Optuna sweeper of the multirun ``config`` (with its
    ``hydra`` node) searches, by key; a key given one value anywhere is searched no more
    (the sweeper passes that value to every trial, after the drawn one)."""
    parsed = OverridesParser.create().parse_overrides(search_arguments(config))
    fixed = {o.get_key_element() for o in parsed if not o.is_sweep_override()}
    return {
        o.get_key_element(): o
        for o in parsed
        if o.is_sweep_override() and o.get_key_element() not in fixed
    }


def largest(override: Override) -> float | None:
    """The largest value the Optuna sweeper draws from the sweep ``override``; None for a
    choice of non-numbers. A range (not shuffled) ends at its last step at or below its
    end, the end included, as Optuna's stepped distributions do."""
    value = override.value()
    if override.is_interval_sweep():
        return value.end
    if override.is_range_sweep() and not value.shuffle:
        bounds = value.start, value.stop, value.step
        start, stop, step = (Decimal(str(x)) for x in bounds)  # exact, as Optuna rounds
        top = start + (stop - start) // step * step
        return float(top) if any(isinstance(x, float) for x in bounds) else int(top)
    numbers = [x for x in override.sweep_iterator() if isinstance(x, int | float)]
    return max(numbers, default=None)


def check_warmup_range(config: DictConfig) -> None:
    """Raise ConfigError if the searched ``optim.warmup_steps`` reach ``trainer.max_steps``."""
    searched = search_space(config).get(WARMUP_KEY)
    top = largest(searched) if searched is not None else None
    max_steps = config.trainer.max_steps
    if top is not None and top >= max_steps:
        typed = [a for a in search_arguments(config) if a.startswith(f"{WARMUP_KEY}=")][-1]
        raise ConfigError(
            f"{typed} searches warmups up to {top:g}, not below trainer.max_steps={max_steps}; "
            f"allowed: warmups below trainer.max_steps, e.g. {WARMUP_KEY}="
            f"{warmup_range(max_steps)} (0 to half the run, the default)"
        )


OmegaConf.register_new_resolver("warmup_range", warmup_range, replace=True)
