"""SyntheticDataModule: batch layout, held-out splits, determinism, settings, workers."""

import re
from types import SimpleNamespace

import lightning
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.utils.data import DistributedSampler

from transformer_lab.config.validation import InvalidSetting
from transformer_lab.data import Split, SyntheticDataModule
from transformer_lab.data.tasks import TASKS
from transformer_lab.tokens import BOS, EOS, FIRST_CONTENT, PAD

TASK_NAMES = ", ".join(sorted(TASKS))

SMALL = dict(
    vocab_size=12, min_task_len=3, max_task_len=8, train_size=2000, val_size=200, test_size=200
)
FOURTEEN = dict(vocab_size=5, min_task_len=1, max_task_len=3)  # 2 content ids: 2 + 4 + 8 sequences


def make(**overrides) -> SyntheticDataModule:
    dm = SyntheticDataModule(**{**SMALL, **overrides})
    dm.setup()
    return dm


def words_of(split: Split) -> list[tuple[int, ...]]:
    """Each source's content words (the row up to its EOS), as tuples."""
    return [tuple(row[: n - 1].tolist()) for row, n in zip(split.src, split.src_len, strict=True)]


def sources_of(src: torch.Tensor) -> list[tuple[int, ...]]:
    """Each row of ``src [N, S]`` without its padding, as a tuple."""
    return [tuple(row[row != PAD].tolist()) for row in src]


def all_batches(loader) -> list[dict]:
    return list(loader)


@pytest.fixture(scope="module")
def dm() -> SyntheticDataModule:
    return make(batch_size=16, test_long_size=100, test_long_max_task_len=12)


@pytest.fixture(scope="module")
def plain() -> SyntheticDataModule:
    """The SMALL settings as they are; never handed to a Trainer, so its loaders stay fresh."""
    return make()


# --- batch layout ---------------------------------------------------------------------


def test_batches_have_matching_shapes_and_long_dtype(dm):
    for batch in all_batches(dm.train_dataloader()):
        b = len(batch["src"])
        assert set(batch) == {"src", "tgt_in", "tgt_out"}
        assert all(t.dtype == torch.long and t.dim() == 2 for t in batch.values())
        assert batch["tgt_in"].shape == batch["tgt_out"].shape
        assert batch["tgt_in"].shape[0] == b


def test_src_rows_end_in_eos_then_only_pad(dm):
    for batch in all_batches(dm.train_dataloader()):
        src = batch["src"]  # [B, S]
        for row in src:
            n = int((row != PAD).sum())
            assert row[n - 1] == EOS  # the last real token is EOS ...
            assert (row[: n - 1] >= FIRST_CONTENT).all()  # ... after content only ...
            assert (row[n:] == PAD).all()  # ... and PAD only comes after it


def test_each_batch_is_trimmed_to_its_longest_row():
    # batch_size 4 with lengths 1..8: many batches are shorter than the global maximum.
    dm = make(min_task_len=1, batch_size=4)
    widths = set()
    for batch in all_batches(dm.val_dataloader()):
        for key in ("src", "tgt_out", "tgt_in"):
            assert (batch[key][:, -1] != PAD).any(), key  # no all-PAD last column
        widths.add(batch["src"].shape[1])
    assert len(widths) > 1
    assert max(widths) == dm.max_seq_len


def test_decoder_input_is_labels_shifted_right_behind_bos(dm):
    for batch in all_batches(dm.train_dataloader()):
        tgt_in, tgt_out = batch["tgt_in"], batch["tgt_out"]  # [B, T]
        assert (tgt_in[:, 0] == BOS).all()
        # Position i+1 of the input holds label i, for every content label (the label
        # EOS has no successor input: the row's input ends there).
        content = tgt_out[:, :-1] >= FIRST_CONTENT
        assert torch.equal(tgt_in[:, 1:] != PAD, content)
        assert torch.equal(tgt_in[:, 1:][content], tgt_out[:, :-1][content])
        lengths = (tgt_out != PAD).sum(dim=1)  # [B]
        assert ((tgt_out == EOS).sum(dim=1) == 1).all()  # exactly one EOS per row ...
        assert (tgt_out[torch.arange(len(tgt_out)), lengths - 1] == EOS).all()  # ... last
        assert torch.equal((tgt_in != PAD).sum(dim=1), lengths)  # same padding mask


@pytest.mark.parametrize("task", sorted(TASKS))
def test_target_is_the_task_applied_to_the_source_words(task):
    dm = make(task=task, train_size=300, val_size=50, test_size=50)
    for split in dm.splits.values():
        for i in range(len(split)):
            ex = split[i]  # 1-D, unpadded
            words = ex["src"][:-1]
            assert torch.equal(ex["tgt_out"][:-1], TASKS[task].apply(words))
            assert torch.equal(ex["tgt_in"][1:], TASKS[task].apply(words))


def test_sample_is_the_first_n_examples_of_a_split(dm):
    batch = dm.sample("val", 5)
    val = dm.splits["val"]
    assert batch["src"].shape[0] == 5
    for i in range(5):
        n = int(val.src_len[i])
        assert torch.equal(batch["src"][i, :n], val[i]["src"])
    assert dm.sample("test", 10_000)["src"].shape[0] == len(dm.splits["test"])
    with pytest.raises(ValueError, match=r"split='nope' is unknown; choose one of"):
        dm.sample("nope", 1)


# --- splits -----------------------------------------------------------------------------


def test_split_sizes_and_names(dm, plain):
    assert {k: len(v) for k, v in dm.splits.items()} == {
        "train": 2000,
        "val": 200,
        "test": 200,
        "test_long": 100,
    }
    assert dm.test_split_names == ["test", "test_long"]
    assert plain.test_split_names == ["test"]


def test_no_source_appears_in_two_splits(dm):
    seen: dict[tuple[int, ...], str] = {}
    for name, split in dm.splits.items():
        for words in words_of(split):
            assert words not in seen, f"{words} in {seen.get(words)} and {name}"
            seen[words] = name
    assert len(seen) == 2000 + 200 + 200 + 100  # also distinct within each split


def test_test_long_lengths_exceed_max_len_and_reach_its_max(dm):
    lengths = dm.splits["test_long"].src_len - 1  # words, without EOS
    assert set(lengths.tolist()) == set(range(9, 13))


def test_lengths_cover_min_len_to_max_len_roughly_uniformly(dm):
    lengths = dm.splits["train"].src_len - 1
    counts = torch.bincount(lengths, minlength=9)[3:].tolist()  # lengths 3..8
    assert len(counts) == 6 and min(counts) > 0
    assert max(counts) < 1.5 * min(counts)  # 2000 / 6 = 333 each, give or take sampling


def test_the_defaults_use_up_a_length_with_too_few_sequences_and_serve_every_example():
    # The defaults (the main job's): 13 content ids, lengths 3..10, 100000 + 500 + 1000
    # examples. Length 3 has only 13**3 = 2197 sequences, less than its share.
    dm = SyntheticDataModule()
    lengths = torch.cat([s.src_len - 1 for s in dm.splits.values()])
    counts = torch.bincount(lengths, minlength=11)[3:].tolist()
    assert counts[0] == 13**3
    assert sum(counts) == 101500 and min(counts[1:]) > 14000  # (101500 - 2197) / 7 each
    sizes = [len(batch["src"]) for batch in dm.train_dataloader()]
    assert sizes == [64] * 1562 + [32]  # 100000 = 1562 * 64 + 32: one epoch serves them all


def test_a_space_exactly_as_large_as_requested_uses_every_sequence_once():
    # 2 content ids, lengths 1..3: 2 + 4 + 8 = 14 sequences.
    dm = make(vocab_size=5, min_task_len=1, max_task_len=3, train_size=10, val_size=2, test_size=2)
    every = {w for split in dm.splits.values() for w in words_of(split)}
    assert len(every) == 14
    assert all(len(w) in (1, 2, 3) and set(w) <= {3, 4} for w in every)


@settings(max_examples=25, deadline=None)
@given(
    vocab_size=st.integers(4, 9),
    min_task_len=st.integers(1, 4),
    extra=st.integers(0, 3),
    fill=st.floats(0.05, 1.0),
    seed=st.integers(0, 2**31),
)
def test_any_feasible_setting_gives_disjoint_splits_of_the_asked_sizes(
    vocab_size, min_task_len, extra, fill, seed
):
    max_task_len = min_task_len + extra
    words = vocab_size - FIRST_CONTENT
    available = sum(words**n for n in range(min_task_len, max_task_len + 1))
    total = max(3, min(int(available * fill), 3000))
    if total > available:
        return
    sizes = dict(train_size=total - 2, val_size=1, test_size=1)
    dm = make(
        vocab_size=vocab_size,
        min_task_len=min_task_len,
        max_task_len=max_task_len,
        seed=seed,
        **sizes,
    )
    every = [w for split in dm.splits.values() for w in words_of(split)]
    assert len(every) == len(set(every)) == total
    assert all(min_task_len <= len(w) <= max_task_len for w in every)
    assert all(FIRST_CONTENT <= t < vocab_size for w in every for t in w)


@pytest.mark.parametrize(
    ("sizes", "message"),
    [
        (
            (15, 1, 1),
            "train_size=15: more distinct train sources than there are: vocab_size=5 (2 "
            "content ids) with lengths 1..3 has 14 distinct sequences; allowed: "
            "train_size <= 14",
        ),
        (
            (10, 5, 1),
            "val_size=5: more distinct val sources than there are: vocab_size=5 (2 content "
            "ids) with lengths 1..3 has 14 distinct sequences, 10 of them in train, which val "
            "never repeats; allowed: val_size <= 4",
        ),
        (
            (10, 3, 2),
            "test_size=2: more distinct test sources than there are: vocab_size=5 (2 content "
            "ids) with lengths 1..3 has 14 distinct sequences, 13 of them in train and val, "
            "which test never repeats; allowed: test_size <= 1",
        ),
    ],
)
def test_too_small_a_space_names_the_split_that_does_not_fit_and_its_maximum(sizes, message):
    train_size, val_size, test_size = sizes
    with pytest.raises(InvalidSetting, match=re.escape(message)):
        SyntheticDataModule(
            **FOURTEEN, train_size=train_size, val_size=val_size, test_size=test_size
        )


def test_too_small_a_space_for_test_long_raises_with_its_size_and_count():
    message = "test_long_size=17: more distinct sources than vocab_size=5 (2 content ids) with "
    message += "lengths 4..4 has: only 16 distinct sequences; allowed: test_long_size <= 16"
    long = dict(test_long_size=17, test_long_max_task_len=4)
    with pytest.raises(InvalidSetting, match=re.escape(message)):
        SyntheticDataModule(**FOURTEEN, train_size=5, val_size=1, test_size=1, **long)


# --- determinism ------------------------------------------------------------------------


def test_same_seed_gives_identical_splits_and_first_epoch_batches():
    a, b = make(seed=7, batch_size=32), make(seed=7, batch_size=32)
    for name in a.splits:
        for key in ("src", "tgt_in", "tgt_out"):
            assert torch.equal(getattr(a.splits[name], key), getattr(b.splits[name], key))
    for x, y in zip(a.train_dataloader(), b.train_dataloader(), strict=True):
        assert all(torch.equal(x[k], y[k]) for k in x)


def test_different_seed_gives_different_data_and_order(plain):
    a, b = plain, make(seed=1)
    assert not torch.equal(a.splits["train"].src, b.splits["train"].src)
    assert set(words_of(a.splits["test"])) != set(words_of(b.splits["test"]))
    first_a, first_b = next(iter(a.train_dataloader())), next(iter(b.train_dataloader()))
    assert not torch.equal(first_a["src"], first_b["src"])


def test_each_epoch_has_its_own_order_which_a_fresh_loader_reproduces(dm):
    def first_batch(loader):
        return next(iter(loader))["src"]

    loader = dm.train_dataloader()
    epoch0, epoch1 = first_batch(loader), first_batch(loader)
    assert not torch.equal(epoch0, epoch1)  # reshuffled every epoch ...
    resumed = dm.train_dataloader()
    resumed.sampler.resume(len(loader), 1, dm.batch_size)  # ... a run resumed at epoch 1
    assert torch.equal(first_batch(resumed), epoch1)


def test_turning_on_test_long_leaves_the_other_splits_unchanged(plain):
    long = make(test_long_size=50, test_long_max_task_len=10)
    for name in ("train", "val", "test"):
        assert torch.equal(plain.splits[name].src, long.splits[name].src)


def test_setup_is_idempotent(dm):
    before = dm.splits["train"]
    dm.setup("fit")
    dm.setup("test")
    assert dm.splits["train"] is before


def test_train_epoch_visits_every_example_once_without_dropping_the_last_batch():
    dm = make(train_size=1000, batch_size=64)  # 1000 = 15 * 64 + 40
    batches = list(dm.train_dataloader())
    assert len(batches) == 16 and len(batches[-1]["src"]) == 40
    served = sorted(tuple(row[row != PAD].tolist()) for b in batches for row in b["src"])
    stored = sorted(tuple(row[row != PAD].tolist()) for row in dm.splits["train"].src)
    assert served == stored


# --- settings ---------------------------------------------------------------------------


def test_vocab_sizes_and_max_seq_len():
    dm = make(vocab_size=20, max_task_len=8)
    assert dm.src_vocab_size == dm.tgt_vocab_size == 20
    assert dm.max_seq_len == 9
    widths = [max(s.src.shape[1], s.tgt_in.shape[1]) for s in dm.splits.values()]
    assert max(widths) == dm.max_seq_len
    long = make(max_task_len=8, test_long_size=20, test_long_max_task_len=14)
    assert long.max_seq_len == 15 == long.splits["test_long"].src.shape[1]


def test_missing_positions_counts_what_a_model_lacks_for_the_longest_sequence():
    dm = make(max_task_len=8)  # 8 words and EOS: 9 positions
    assert [dm.missing_positions(n) for n in (6, 8, 9, 64)] == [3, 1, 0, 0]
    long = make(max_task_len=8, test_long_size=20, test_long_max_task_len=14)  # test_long decides
    assert [long.missing_positions(n) for n in (9, 14, 15)] == [6, 1, 0]


def test_test_dataloader_is_a_list_only_with_test_long(dm, plain):
    loaders = dm.test_dataloader()
    assert isinstance(loaders, list) and len(loaders) == 2
    assert len(loaders[1].dataset) == 100
    assert len(plain.test_dataloader().dataset) == 200


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (dict(task="rot13"), f"task='rot13': unknown; allowed: {TASK_NAMES}"),
        (dict(vocab_size=3), "vocab_size=3: out of range; allowed: an integer >= 4"),
        (dict(min_task_len=0), "min_task_len=0: out of range; allowed: an integer >= 1"),
        (
            dict(min_task_len=9, max_task_len=8),
            "min_task_len=9: above max_task_len=8; allowed: <= max_task_len",
        ),
        (dict(train_size=0), "train_size=0: out of range; allowed: an integer >= 1"),
        (dict(val_size=-1), "val_size=-1: out of range; allowed: an integer >= 1"),
        (dict(test_size=0), "test_size=0: out of range; allowed: an integer >= 1"),
        (dict(batch_size=0), "batch_size=0: out of range; allowed: an integer >= 1"),
        (dict(num_workers=-1), "num_workers=-1: out of range; allowed: an integer >= 0"),
        (dict(test_long_size=-2), "test_long_size=-2: out of range; allowed: an integer >= 0"),
        (
            dict(test_long_size=10, test_long_max_task_len=8),
            "test_long_max_task_len=8: not above max_task_len=8, but test_long_size=10 asks for "
            "sources longer than any seen in training; allowed: test_long_max_task_len > 8, or "
            "test_long_size=0",
        ),
        # of the wrong type: each would fail later, inside torch or a comparison
        (dict(task=["reverse"]), f"task=['reverse']: unknown; allowed: {TASK_NAMES}"),
        (dict(batch_size="32"), "batch_size='32': not an integer; allowed: an integer >= 1"),
        (dict(max_task_len=8.0), "max_task_len=8.0: not an integer; allowed: an integer >= 1"),
        (dict(seed="abc"), "seed='abc': not an integer; allowed: an integer >= 0"),
    ],
)
def test_bad_setting_raises_naming_setting_value_and_allowed(overrides, message):
    with pytest.raises(InvalidSetting, match=re.escape(message)):
        SyntheticDataModule(**{**SMALL, **overrides})


def test_saved_hyperparameters_rebuild_the_same_splits(plain):
    # What a checkpoint stores (datamodule_hyper_parameters) must be all it takes.
    dm = make(task="sort", seed=3)
    assert dm.hparams["task"] == "sort" and dm.hparams["seed"] == 3
    again = SyntheticDataModule(**dm.hparams)
    for name, split in dm.splits.items():
        assert torch.equal(again.splits[name].tgt_out, split.tgt_out), name
    assert not torch.equal(dm.splits["train"].src, plain.splits["train"].src)


# --- workers and Lightning ---------------------------------------------------------------


def test_two_workers_serve_the_batches_of_an_epoch(plain):
    dm = make(num_workers=2, batch_size=8)
    loader = dm.train_dataloader()
    assert loader.persistent_workers
    batches = list(loader)  # the whole epoch: workers left with batches in flight take
    # seconds to shut down when the loader is collected, in whichever test that happens
    assert all(b["src"].shape[0] == 8 and (b["tgt_in"][:, 0] == BOS).all() for b in batches)
    assert not plain.train_dataloader().persistent_workers


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:You passed in a `val_dataloader` but have no")
@pytest.mark.filterwarnings("ignore:`isinstance\\(treespec, LeafSpec\\)` is deprecated")
def test_lightning_epochs_follow_the_seeded_order_of_each_epoch(plain):
    class FirstRows(lightning.LightningModule):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.zeros(1))
            self.first_rows: list[list[int]] = []

        def training_step(self, batch, batch_idx):
            if batch_idx == 0:
                self.first_rows.append(batch["src"][0].tolist())
            return self.weight * batch["src"].float().mean()

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    module = FirstRows()
    trainer = lightning.Trainer(
        max_epochs=3,
        limit_train_batches=1,
        limit_val_batches=0,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(module, datamodule=make())
    # Epoch e's order is a function of (seed, e): what a fresh loader's e-th epoch serves.
    loader = plain.train_dataloader()
    expected = [next(iter(loader))["src"][0].tolist() for _ in range(3)]
    assert module.first_rows == expected
    assert len({tuple(row) for row in expected}) == 3


class BatchRecorder(lightning.LightningModule):
    """Records the source rows of every training batch it is given."""

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))
        self.batches: list[list[list[int]]] = []

    def training_step(self, batch, batch_idx):
        self.batches.append(batch["src"].tolist())
        return self.weight * batch["src"].float().mean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def fit_recorded(max_steps: int, ckpt_path=None) -> tuple[BatchRecorder, lightning.Trainer]:
    module = BatchRecorder()
    trainer = lightning.Trainer(
        max_steps=max_steps,
        accumulate_grad_batches=2,
        limit_val_batches=0,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    # 200 examples in batches of 16: 13 batches an epoch, whose last one steps alone
    trainer.fit(module, datamodule=make(train_size=200, batch_size=16), ckpt_path=ckpt_path)
    return module, trainer


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:You passed in a `val_dataloader` but have no")
@pytest.mark.filterwarnings("ignore:.*ended before the epoch ended and your dataloader")
@pytest.mark.filterwarnings("ignore:`isinstance\\(treespec, LeafSpec\\)` is deprecated")
def test_a_run_resumed_from_a_checkpoint_saved_after_fit_trains_on_the_batches_it_had_left(
    tmp_path,
):
    straight, _ = fit_recorded(max_steps=12)  # 7 steps in epoch 0, 5 in epoch 1
    assert len(straight.batches) == 13 + 10
    stopped, trainer = fit_recorded(max_steps=9)  # 4 batches into epoch 1 ...
    trainer.save_checkpoint(tmp_path / "stopped.ckpt")  # ... saved after fit: loops closed
    resumed, _ = fit_recorded(max_steps=12, ckpt_path=tmp_path / "stopped.ckpt")
    assert len(stopped.batches) == 17
    assert stopped.batches + resumed.batches == straight.batches


def on_ranks(dm: SyntheticDataModule, world_size: int, rank: int) -> SyntheticDataModule:
    """``dm`` as a distributed trainer's rank ``rank`` of ``world_size`` sees it: the two
    things its loaders read of the trainer (a fresh start: step 0)."""
    kwargs = {"num_replicas": world_size, "rank": rank}
    dm.trainer = SimpleNamespace(
        distributed_sampler_kwargs=kwargs, global_step=0, accumulate_grad_batches=1
    )
    return dm


def test_distributed_ranks_get_loaders_lightning_keeps_which_serve_each_example_once():
    dm = make(val_size=200, test_size=203, batch_size=16)  # 203 = 3 * 67 + 2
    served: dict[str, list[tuple[int, ...]]] = {"train": [], "test": []}
    train_batches = []
    for rank in range(3):
        on_ranks(dm, 3, rank)
        test, train = dm.test_dataloader(), dm.train_dataloader()
        # Lightning substitutes a padding sampler for any that is not a DistributedSampler
        # (data_connector._requires_distributed_sampler); these it keeps as they are.
        assert isinstance(test.sampler, DistributedSampler)
        assert isinstance(train.sampler, DistributedSampler)
        served["test"] += [words for batch in test for words in sources_of(batch["src"])]
        served["train"] += [words for batch in train for words in sources_of(batch["src"])]
        train_batches.append(len(train))
    assert sorted(served["test"]) == sorted(sources_of(dm.splits["test"].src))  # none twice
    assert train_batches == [42] * 3  # 2000 / 3 -> 667 a rank (one padded), in 42 batches
    assert set(served["train"]) == set(sources_of(dm.splits["train"].src))
    assert len(served["train"]) == 3 * 667


def test_a_split_smaller_than_the_ranks_is_a_clear_error():
    dm = on_ranks(make(val_size=7), 8, 0)
    message = "data.val_size=7: fewer examples than the 8 processes that evaluate them; "
    message += "allowed: data.val_size >= 8, or fewer trainer.devices"
    with pytest.raises(InvalidSetting, match=re.escape(message)):
        dm.val_dataloader()
