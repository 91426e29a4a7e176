"""The seconds a run has spent fitting, across its resumes: ``metrics.json``'s
``train_seconds``.

A run stopped and resumed fits in two processes; timing the second one alone would record
only the part after the resume (a run paused near its end would read as ten times faster
than its twin). The clock's seconds go into every checkpoint with the rest of the
trainer's state, and a resume goes on counting from them, as Lightning's ``Timer`` does for
``trainer.max_time``; the clock is the job's own, so that the record holds whether or not
the config sets a time budget.
"""

import time

import lightning as L


class FitClock(L.Callback):
    """Wall-clock seconds from the fit's start to its end, plus those of the checkpoint it
    resumed from."""

    def __init__(self) -> None:
        self._before = 0.0  # seconds of the fits before this one (the checkpoint's)
        self._started: float | None = None
        self._ended: float | None = None

    @property
    def seconds(self) -> float:
        if self._started is None:
            return self._before
        now = time.perf_counter() if self._ended is None else self._ended
        return self._before + now - self._started

    def on_fit_start(self, trainer, pl_module) -> None:
        self._started, self._ended = time.perf_counter(), None

    def on_fit_end(self, trainer, pl_module) -> None:
        self._ended = time.perf_counter()

    def state_dict(self) -> dict:
        return {"seconds": self.seconds}

    def load_state_dict(self, state_dict: dict) -> None:
        self._before = state_dict["seconds"]


def fit_seconds(trainer: L.Trainer) -> float:
    """The run's :class:`FitClock` seconds."""
    (clock,) = [c for c in trainer.callbacks if isinstance(c, FitClock)]
    return clock.seconds
