"""The learning-rate schedules side by side, the figure in docs/configuration.md::

    python -m transformer_lab.report.schedule_figure docs/schedules.png

Drawn from :func:`~transformer_lab.training.schedules.lr_multiplier`, the function every run
steps through, at the main job's warmup (400) and length (1,500 steps), cosine at the
main job's floor (0.1 of the peak).
"""

import sys
from pathlib import Path

from transformer_lab.callbacks.plotting import new_figure, save_png
from transformer_lab.training.schedules import SCHEDULES, lr_multiplier

WARMUP, MAX_STEPS, MIN_LR_RATIO = 400, 1500, 0.1


def schedule_figure(path: Path) -> Path:
    """Every schedule's multiplier of ``optim.lr`` against the step, written to ``path``."""
    figure = new_figure(6.4, 3.4)
    ax = figure.subplots()
    steps = range(MAX_STEPS)
    for name in SCHEDULES:
        multiplier = lr_multiplier(name, WARMUP, MIN_LR_RATIO, MAX_STEPS)
        ax.plot([s + 1 for s in steps], [multiplier(s) for s in steps], label=name)
    ax.set_xlabel("step")
    ax.set_ylabel("learning rate / optim.lr")
    ax.set_title(f"optim.warmup_steps={WARMUP}, trainer.max_steps={MAX_STEPS}")
    ax.legend()
    return save_png(figure, path)


if __name__ == "__main__":
    print(schedule_figure(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/schedules.png")))
