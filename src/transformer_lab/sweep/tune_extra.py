"""``hparams_search=optuna`` needs the ``[tune]`` extra: Optuna and Hydra's Optuna sweeper,
with the stack they bring (SQLAlchemy, alembic, cliff, cmaes, ...), which an install that
never tunes goes without.

Without the sweeper Hydra fails while it composes the config, before any code of the lab
runs, with a traceback about a missing ``hydra/sweeper/optuna``; so the entry point reads
the command line first (:func:`check_tuning_installed`) and refuses in one line that names
the extra. Only a command that asks for the sweeper imports it here: a plain run never
imports Optuna.
"""

import importlib
import re
from collections.abc import Sequence

from transformer_lab.config.validation import InvalidSetting

# the overrides that put Optuna's sweeper into the composed config
ASKS_FOR_OPTUNA = re.compile(r"^\+{0,2}(?P<key>hparams_search|hydra/sweeper)=(?P<value>optuna)$")
NEEDED = ("optuna", "hydra_plugins.hydra_optuna_sweeper.optuna_sweeper")
INSTALL = 'pip install "transformer_lab[tune]"'


def check_tuning_installed(arguments: Sequence[str]) -> None:
    """InvalidSetting if ``arguments`` (the command line's) ask for Optuna's sweeper and
    :data:`NEEDED` does not import."""
    asked = next((m for m in map(ASKS_FOR_OPTUNA.match, arguments) if m), None)
    if asked is None:
        return
    try:
        for module in NEEDED:
            importlib.import_module(module)
    except ImportError:
        raise InvalidSetting(
            asked["key"],
            asked["value"],
            "needs Optuna and Hydra's Optuna sweeper, not installed",
            INSTALL,
        ) from None
