"""SCAN (Lake & Baroni, 2018): navigation commands and the action sequences they mean,
generated from the paper's grammar and interpretation function.

The grammar (the paper's Figure 6, supplementary material)::

    C -> S and S | S after S | S
    S -> V twice | V thrice | V
    V -> D opposite D' | D around D' | D | U      (D' a direction: left, right)
    D -> U left | U right | turn left | turn right
    U -> walk | look | run | jump

so ``V`` is a primitive ``U`` (4), or ``U`` or ``turn`` with ``left``/``right``, plain,
``opposite`` or ``around`` (5 x 2 x 3 = 30): 34 verb phrases, 102 sentences, and
102 + 2 x 102**2 = 20,910 commands, the size of the released ``tasks.txt``.

The interpretation: ``walk`` -> ``I_WALK`` (likewise look, run, jump); ``turn`` alone does
nothing but turn; ``x left`` -> ``I_TURN_LEFT x``; ``x opposite left`` -> ``I_TURN_LEFT
I_TURN_LEFT x``; ``x around left`` -> ``(I_TURN_LEFT x)`` four times; ``s twice``/``thrice``
repeat ``s``; ``s1 and s2`` -> ``s1 s2``; ``s1 after s2`` -> ``s2 s1``. The generated pairs
equal the released ``tasks.txt`` line for line as a set (tests/data/test_scan.py pins it).

The splits: ``simple``, a random 80/20 train/test cut (16,728 / 4,182, the released
split's sizes; here seeded); ``length``, trained on the commands whose action sequence
has at most 22 actions (16,990) and tested on the longer ones (3,920, 24 to 48 actions).
"""

from random import Random

from transformer_lab.data.examples import Example

PRIMITIVES = {"walk": "I_WALK", "look": "I_LOOK", "run": "I_RUN", "jump": "I_JUMP"}
TURNS = {"left": "I_TURN_LEFT", "right": "I_TURN_RIGHT"}
COMMAND_WORDS = (
    *PRIMITIVES,
    "turn",
    *TURNS,
    "opposite",
    "around",
    "twice",
    "thrice",
    "and",
    "after",
)
ACTION_WORDS = (*PRIMITIVES.values(), *TURNS.values())
SPLITS = ("simple", "length")
SIMPLE_TEST_SHARE = 0.2
LENGTH_SPLIT_MAX_ACTIONS = 22  # the length split trains on at most this many actions
NUM_COMMANDS = 20910
LONGEST_ACTIONS = 48  # e.g. jump around left thrice and walk around right thrice


def verb_phrases() -> list[Example]:
    """The 34 ``V``: ``(command words, actions)``."""
    phrases = [([u], [action]) for u, action in PRIMITIVES.items()]
    for doer in (*PRIMITIVES, "turn"):
        act = [] if doer == "turn" else [PRIMITIVES[doer]]
        for direction, turn in TURNS.items():
            phrases.append(([doer, direction], [turn, *act]))
            phrases.append(([doer, "opposite", direction], [turn, turn, *act]))
            phrases.append(([doer, "around", direction], [turn, *act] * 4))
    return phrases


def sentences() -> list[Example]:
    """The 102 ``S``: each verb phrase once, ``twice`` and ``thrice``."""
    return [
        (words + suffix, actions * times)
        for words, actions in verb_phrases()
        for suffix, times in (([], 1), (["twice"], 2), (["thrice"], 3))
    ]


def commands() -> list[Example]:
    """All 20,910 commands ``C`` with their action sequences, in a fixed order."""
    single = sentences()
    joined = [
        (
            [*first, conjunction, *second],
            acts + second_acts if conjunction == "and" else second_acts + acts,
        )
        for first, acts in single
        for second, second_acts in single
        for conjunction in ("and", "after")
    ]
    return single + joined


def split_commands(split: str, rng: Random) -> tuple[list[Example], list[Example]]:
    """``(train, test)`` of the ``split`` (``simple`` or ``length``), each in a random
    order drawn from ``rng``."""
    every = commands()
    if split == "simple":
        rng.shuffle(every)
        num_test = round(SIMPLE_TEST_SHARE * len(every))
        return every[num_test:], every[:num_test]
    train = [e for e in every if len(e[1]) <= LENGTH_SPLIT_MAX_ACTIONS]
    test = [e for e in every if len(e[1]) > LENGTH_SPLIT_MAX_ACTIONS]
    rng.shuffle(train)
    rng.shuffle(test)
    return train, test
