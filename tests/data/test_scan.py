"""SCAN generated from Lake & Baroni's grammar: the released commands exactly, the
interpretation on known pairs, and the simple and length splits."""

import hashlib
from random import Random

import pytest
import torch

from transformer_lab.data import scan
from transformer_lab.data.word_tasks import ScanDataModule

# sha256 of the sorted lines "IN: <command> OUT: <actions>" of the released tasks.txt and of
# length_split/tasks_train_length.txt (github.com/brendenlake/SCAN at c4b756c), computed
# from those files: the generator gives exactly the released commands and length split.
TASKS_TXT = "345bff3c25864652f326ba1960aa515d156b63f45067ea57268f71d7362a2440"
LENGTH_TRAIN_TXT = "114e6bdb1575f27d8d6d4449081970cef4846b2ec89b260dc2a0e5297c3e75d5"


def digest(examples) -> str:
    lines = sorted(f"IN: {' '.join(c)} OUT: {' '.join(a)}" for c, a in examples)
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def test_the_grammar_gives_the_20910_released_commands():
    commands = scan.commands()
    assert len(commands) == len({tuple(c) for c, _ in commands}) == 20910
    assert digest(commands) == TASKS_TXT


KNOWN = {
    "jump": "I_JUMP",
    "jump twice": "I_JUMP I_JUMP",
    "turn left twice": "I_TURN_LEFT I_TURN_LEFT",
    "jump left": "I_TURN_LEFT I_JUMP",
    "jump around right": "I_TURN_RIGHT I_JUMP I_TURN_RIGHT I_JUMP I_TURN_RIGHT I_JUMP "
    "I_TURN_RIGHT I_JUMP",
    "jump opposite left and walk thrice": "I_TURN_LEFT I_TURN_LEFT I_JUMP I_WALK I_WALK I_WALK",
    "walk opposite left after run": "I_RUN I_TURN_LEFT I_TURN_LEFT I_WALK",
    "jump opposite left after walk around left": "I_TURN_LEFT I_WALK I_TURN_LEFT I_WALK "
    "I_TURN_LEFT I_WALK I_TURN_LEFT I_WALK I_TURN_LEFT I_TURN_LEFT I_JUMP",
    "turn around left": "I_TURN_LEFT I_TURN_LEFT I_TURN_LEFT I_TURN_LEFT",
    "turn opposite right thrice": " ".join(["I_TURN_RIGHT"] * 6),
}


@pytest.mark.parametrize("command", KNOWN)
def test_known_commands_mean_their_actions(command):
    meaning = {" ".join(c): " ".join(a) for c, a in scan.commands()}
    assert meaning[command] == KNOWN[command]


def test_the_simple_split_is_a_random_80_20_cut():
    train, test = scan.split_commands("simple", Random(0))
    assert (len(train), len(test)) == (16728, 4182)
    assert not {tuple(c) for c, _ in train} & {tuple(c) for c, _ in test}
    again, _ = scan.split_commands("simple", Random(0))
    other, _ = scan.split_commands("simple", Random(1))
    assert again == train != other


def test_the_length_split_trains_on_at_most_22_actions_and_tests_longer():
    train, test = scan.split_commands("length", Random(0))
    assert (len(train), len(test)) == (16990, 3920)
    assert max(len(a) for _, a in train) == 22
    assert (min(len(a) for _, a in test), max(len(a) for _, a in test)) == (24, 48)
    assert max(len(a) for _, a in test) == scan.LONGEST_ACTIONS
    assert digest(train) == LENGTH_TRAIN_TXT


def test_the_datamodule_holds_out_val_from_the_training_side_in_two_vocabularies():
    dm = ScanDataModule(split="length", val_size=300, seed=3)
    sizes = {name: len(split) for name, split in dm.splits.items()}
    assert sizes == {"train": 16690, "val": 300, "test": 3920}
    assert (dm.src_vocab_size, dm.tgt_vocab_size) == (3 + 13, 3 + 6)
    assert dm.max_seq_len == max(int(s.tgt_len.max()) for s in dm.splits.values()) == 49
    batch = dm.sample("test", 1)
    assert len(dm.tgt_codec.decode(batch["tgt_out"][0].tolist()).split()) >= 24


def test_train_size_and_test_size_take_the_first_of_scans_fixed_sides():
    """A fixed set: the sizes cap it (smoke's 512 and 64), in the order the seed drew, and
    the held-out val is the same whatever they are."""
    full = ScanDataModule(seed=3)
    capped = ScanDataModule(seed=3, train_size=512, test_size=64)
    assert {k: len(v) for k, v in full.splits.items()} == {
        "train": 16228,
        "val": 500,
        "test": 4182,
    }
    for name, size in (("train", 512), ("val", 500), ("test", 64)):
        ours = capped.splits[name].__getitems__(range(size))
        theirs = full.splits[name].__getitems__(range(size))
        assert all(torch.equal(ours[key], theirs[key]) for key in ours), name
