"""The command line composed before Hydra composes it: what it accepts, and which jobs of a
sweep it composes (the refusals, through the command line: tests/e2e/test_typos.py)."""

from hydra.core.override_parser.overrides_parser import OverridesParser

from transformer_lab.config.command_line import check_overrides, jobs_to_compose, nearest_first


def test_the_nearest_names_come_first_and_the_rest_keep_their_order():
    assert nearest_first("pair", ["addition", "copy", "pairs", "reverse"]) == [
        "pairs",
        "addition",
        "copy",
        "reverse",
    ]


def test_every_value_of_a_swept_group_is_composed_once_and_a_swept_key_once():
    typed = ["data=reverse,copy,sort", "seed=0,1,2", "trainer.max_steps=5"]
    parsed = OverridesParser.create().parse_overrides(typed)
    jobs = jobs_to_compose(parsed, lambda o: o.key_or_group == "data")
    assert jobs == [
        ["data=reverse", "seed=0", "trainer.max_steps=5"],
        ["data=copy", "seed=0", "trainer.max_steps=5"],
        ["data=sort", "seed=0", "trainer.max_steps=5"],
    ]


def test_an_experiment_of_ones_own_on_the_search_path_is_accepted(tmp_path):
    (tmp_path / "experiment").mkdir()
    (tmp_path / "experiment" / "mine.yaml").write_text("# @package _global_\nseed: 3\n")
    check_overrides([f"hydra.searchpath=[file://{tmp_path}]", "experiment=mine"], "train")
    check_overrides(["-m", "model/norm=pre,post", "+trainer.note=1", "~callbacks.samples"], "train")
