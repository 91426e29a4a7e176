"""The study of an ``hparams_search=optuna`` sweep, drawn by Optuna's own matplotlib
plots from its storage, which the worker sweep or the workers inside the study folder
recorded (:mod:`transformer_lab.sweep.study`), every worker's trials: the optimisation
history (every trial's value, and the best so far), and the importance of each searched
parameter from Optuna's importance evaluators, as a bar chart of our own: Optuna 2.10's
``plot_param_importances`` calls ``matplotlib.cm.get_cmap``, gone since matplotlib 3.9.
The importances come from a random forest fitted to the trials (Optuna's
mean-decrease-impurity evaluator, seeded), which needs scikit-learn, the
``transformer_lab[importances]`` extra: Optuna 2.10's own fANOVA, which needs nothing,
fails on numpy 2 (an array assigned into an array element). Without scikit-learn the
report draws the history alone and says why. Trials a stopped sweep left failed are not
drawn; a continued study is one history.

Optuna draws through pyplot and switches its style to ggplot; here both stay inside
:func:`_optuna_figure`, so the report's other figures and a notebook that imports the
package keep their own.
"""

import importlib.util
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import matplotlib
import optuna
from matplotlib import pyplot
from matplotlib.figure import Figure

from transformer_lab.callbacks.plotting import new_figure, save_png
from transformer_lab.console import unheard
from transformer_lab.report.sweep import Sweep
from transformer_lab.sweep.study import load_study

log = logging.getLogger(__name__)

COMPLETE = optuna.trial.TrialState.COMPLETE


@contextmanager
def _optuna_figure() -> Iterator[None]:
    """Optuna's pyplot figures, style and experimental-feature warnings kept in here."""
    with matplotlib.rc_context(), unheard("optuna_experimental"):
        yield


def _draw(plot: Callable, study: optuna.Study, path: Path) -> Path:
    with _optuna_figure():
        axes = plot(study)
        figure = axes.figure
        figure.set_size_inches(6.4, 4.0)
        figure.set_layout_engine("constrained")
        save_png(figure, path)
        pyplot.close(figure)
    return path


def _importance_bars(importances: dict[str, float]) -> Figure:
    """One bar per searched parameter, the most important on top."""
    names = list(importances)[::-1]  # [least, ..., most]: barh draws upwards
    figure = new_figure(6.4, 1.2 + 0.5 * len(names))
    ax = figure.subplots()
    ax.barh(names, [importances[name] for name in names], color="C0")
    for y, name in enumerate(names):
        ax.text(importances[name], y, f" {importances[name]:.2f}", va="center", fontsize=8)
    ax.set_xlim(0, 1.1)
    ax.set_xlabel("importance (share of the objective's variation)")
    return figure


def study_figures(sweep: Sweep, folder: Path) -> list[tuple[str, str]]:
    """The history and, from two finished trials on, the parameter importances of the
    study the sweep folder's workers recorded; nothing for a sweep without one."""
    study = load_study(sweep.path)
    finished = [] if study is None else study.get_trials(deepcopy=False, states=(COMPLETE,))
    if not finished:
        return []
    metric = f"{study.direction.name.lower()} the objective"
    _draw(
        optuna.visualization.matplotlib.plot_optimization_history,
        study,
        folder / "study_history.png",
    )
    written = [
        (
            f"Optuna study `{study.study_name}`: the objective of each of its {len(finished)} "
            f"finished trials, in the order they ran, and the best so far ({metric})",
            "study_history.png",
        )
    ]
    if len(finished) < 2:
        return written
    if importlib.util.find_spec("sklearn") is None:
        log.warning(
            "the study's parameter importances need scikit-learn: "
            "pip install 'transformer_lab[importances]'"
        )
        return written
    evaluator = optuna.importance.MeanDecreaseImpurityImportanceEvaluator(seed=0)
    importances = optuna.importance.get_param_importances(study, evaluator=evaluator)
    save_png(_importance_bars(importances), folder / "study_importances.png")
    written.append(
        (
            f"Optuna study `{study.study_name}`: how much of the objective's variation over "
            "its trials each searched parameter explains (mean decrease in impurity of a "
            "random forest fitted to the trials)",
            "study_importances.png",
        )
    )
    return written
