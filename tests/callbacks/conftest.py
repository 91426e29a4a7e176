"""One tiny real run with every callback switched to its busiest setting, for the tests that
read its TensorBoard events and files (a run costs seconds; reading is free)."""

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from transformer_lab.job.run import train

from ..conftest import compose_run

TINY = ["experiment=smoke", "~callbacks.progress_bar"]
STEPS = 12


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """The run folder of a 12-step post-norm run, trained in this process as the command line
    trains it: attention maps at every validation (steps 6 and 12), layer stats every 3
    steps."""
    run = tmp_path_factory.mktemp("tiny_run") / "run"
    overrides = [
        *TINY,
        f"trainer.max_steps={STEPS}",
        "trainer.val_check_interval=6",
        "callbacks.attention_maps.every_n_validations=1",
        "callbacks.layer_stats.every_n_steps=3",
    ]
    train(compose_run(run, overrides))
    return run


@pytest.fixture(scope="module")
def events(tiny_run) -> EventAccumulator:
    accumulator = EventAccumulator(str(tiny_run), size_guidance={"images": 0, "scalars": 0})
    accumulator.Reload()
    return accumulator
