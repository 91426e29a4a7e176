"""The Optuna sweeper's reading of a search space, pinned: :func:`largest` (Hydra's public
override parser) against the plugin's own function, which lives in its private ``_impl``,
so a plugin release that reads a range differently fails here."""

import warnings

import pytest
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra_plugins.hydra_optuna_sweeper._impl import (
    create_optuna_distribution_from_override,
    create_params_from_overrides,
)
from optuna.distributions import CategoricalDistribution

from transformer_lab.console import SCHEMA_NOTICE
from transformer_lab.sweep.search_space import largest, search_space

pytestmark = pytest.mark.filterwarnings(f"ignore:{SCHEMA_NOTICE}")


def plugins_largest(override) -> float | None:
    """The largest value of the distribution the plugin builds for ``override``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Optuna's note on a range it rounds down
        distribution = create_optuna_distribution_from_override(override)
    if isinstance(distribution, CategoricalDistribution):
        return max((c for c in distribution.choices if isinstance(c, int | float)), default=None)
    return distribution.high


@pytest.mark.parametrize(
    ("typed", "top"),
    [
        ("range(0,600,step=50)", 600),  # the end of a range is drawn
        ("range(0,95,step=10)", 90),  # the last step below the end
        ("range(0.0,1.0,step=0.3)", 0.9),
        ("shuffle(range(0,600,step=50))", 550),  # shuffled: the range's own values
        ("choice(0,100,200)", 200),
        ("choice(a,b)", None),
        ("interval(0,300)", 300),
        ("tag(log,interval(1e-4,3e-2))", 3e-2),
    ],
)
def test_the_largest_searched_value_is_the_one_the_plugin_can_draw(typed, top):
    (override,) = OverridesParser.create().parse_overrides([f"optim.warmup_steps={typed}"])
    assert largest(override) == pytest.approx(plugins_largest(override)) == top


def test_a_key_the_command_line_fixes_is_searched_no_more_as_in_the_plugin(compose_sweep):
    cfg = compose_sweep(["hparams_search=optuna", "trainer.max_steps=200", "optim.lr=1e-3"])
    distributions, fixed = create_params_from_overrides(
        [f"{k}={v}" for k, v in cfg.hydra.sweeper.params.items()] + list(cfg.hydra.overrides.task)
    )
    plugins = {key for key in distributions if key not in fixed}
    assert set(search_space(cfg)) == plugins == {"optim.warmup_steps"}
