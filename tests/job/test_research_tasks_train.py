"""Each research task trains through the same job as the synthetic ones: a few steps of a
tiny model, the test splits measured (test_long past the trained lengths where the task
has one), the sample table written in the task's own words."""

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.util.tensor_util import make_ndarray

from transformer_lab.job.run import train

pytestmark = pytest.mark.slow
TINY = [
    "model.d_model=32",
    "model.d_ff=64",
    "model.num_heads=2",
    "trainer.accelerator=cpu",
    "trainer.max_steps=4",
    "trainer.val_check_interval=4",
    "~callbacks.progress_bar",
    "~callbacks.norm_comparison",
    "~callbacks.attention_maps",
    "samples=0",
]
TASKS = {
    "addition": (["data.train_size=256", "data.test_long_size=32"], "+", True),
    "recall": (["data.train_size=256", "data.test_long_size=32"], "?", True),
    "scan": ([], "I_", False),
}


@pytest.mark.parametrize("task", TASKS)
def test_a_research_task_trains_and_tests_in_its_own_words(compose_train, tmp_path, task):
    settings, word, has_long = TASKS[task]
    metrics = train(compose_train([f"data={task}", *TINY, *settings]))
    assert metrics["diverged"] == 0.0
    assert {"val/seq_acc", "test/seq_acc", "test/token_acc"} <= set(metrics)
    assert ("test_long/seq_acc" in metrics) == has_long
    events = EventAccumulator(str(tmp_path / "run"), size_guidance={"tensors": 0})
    events.Reload()
    (table,) = events.Tensors("samples/test/text_summary")
    assert word in make_ndarray(table.tensor_proto).item().decode()
