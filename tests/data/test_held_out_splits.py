"""Held out whatever the sizes: train depends on none of the held-out sizes, and a test
split of any size, as ``evaluate data.test_size=N`` rebuilds it, shares no source with the
run's train and val splits."""

import re
from pathlib import Path

import pytest
import torch
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from transformer_lab.data import Split, SyntheticDataModule
from transformer_lab.evaluate import EvaluationError, with_test_splits
from transformer_lab.tokens import PAD

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"


def main_job_data() -> dict:
    """The main job's data settings (``conf/data/reverse.yaml`` with the split settings it
    composes), seed 0."""
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        data = compose("train", overrides=["seed=0"]).data
    return {k: v for k, v in OmegaConf.to_container(data, resolve=True).items() if k != "_target_"}


def source_numbers(split: Split, vocab_size: int, width: int) -> torch.Tensor:
    """Each source of ``split`` as one number ``[N]``: its ``src`` row (words, EOS, PAD)
    padded to ``width`` and read in base ``vocab_size``; equal numbers, equal sources."""
    src = torch.nn.functional.pad(split.src, (0, width - split.src.shape[1]), value=PAD)
    return (src * vocab_size ** torch.arange(width - 1, -1, -1)).sum(dim=1)


@pytest.fixture(scope="module")
def run_data() -> SyntheticDataModule:
    """The datamodule of a main-job run: 100,000 train, 500 val, 1,000 test sources."""
    dm = SyntheticDataModule(**main_job_data())
    dm.setup()
    return dm


def assert_same(a: Split, b: Split) -> None:
    for key in ("src", "tgt_in", "tgt_out"):
        assert torch.equal(getattr(a, key), getattr(b, key)), (a.name, key)


@pytest.mark.parametrize("test_size", [999, 1000, 1001, 3000])
def test_evaluate_on_a_test_split_of_any_size_never_tests_a_train_or_val_source(
    run_data, test_size
):
    rebuilt = with_test_splits(run_data, {"test_size": test_size}, model_positions=64)
    assert_same(rebuilt.splits["train"], run_data.splits["train"])
    assert_same(rebuilt.splits["val"], run_data.splits["val"])
    numbers = {name: source_numbers(rebuilt.splits[name], 16, width=11) for name in rebuilt.splits}
    assert len(numbers["test"].unique()) == test_size
    assert int(torch.isin(numbers["test"], numbers["train"]).sum()) == 0
    assert int(torch.isin(numbers["test"], numbers["val"]).sum()) == 0
    if test_size == 1000:  # the run's own size: the run's own test split
        assert_same(rebuilt.splits["test"], run_data.splits["test"])


def test_train_depends_on_no_held_out_size_and_val_not_on_test_size():
    small = dict(
        vocab_size=12, min_task_len=3, max_task_len=8, train_size=2000, val_size=200, test_size=200
    )
    base = SyntheticDataModule(**small)
    other_val = SyntheticDataModule(**(small | {"val_size": 300, "test_size": 50}))
    other_test = SyntheticDataModule(**(small | {"test_size": 700}))
    for dm in (other_val, other_test):
        assert_same(dm.splits["train"], base.splits["train"])
    assert_same(other_test.splits["val"], base.splits["val"])
    # a different val split: test draws around it, and stays clear of it
    assert not torch.equal(other_val.splits["test"].src[:50], base.splits["test"].src[:50])
    numbers = {name: source_numbers(split, 12, 9) for name, split in other_val.splits.items()}
    assert not torch.isin(numbers["test"], torch.cat([numbers["train"], numbers["val"]])).any()


def test_a_test_split_too_large_to_stay_disjoint_names_the_setting_and_its_maximum():
    # 2 content ids, lengths 1..3: 14 sequences, 12 of them in train and val
    run = SyntheticDataModule(
        vocab_size=5, min_task_len=1, max_task_len=3, train_size=10, val_size=2, test_size=2
    )
    assert len(with_test_splits(run, {"test_size": 2}, model_positions=64).splits["test"]) == 2
    message = (
        "data.test_size=3: more distinct test sources than there are: vocab_size=5 (2 content "
        "ids) with lengths 1..3 has 14 distinct sequences, 12 of them in train and val, which "
        "test never repeats; allowed: test_size <= 2"
    )
    with pytest.raises(EvaluationError, match=re.escape(message)):
        with_test_splits(run, {"test_size": 3}, model_positions=64)
