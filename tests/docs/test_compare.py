"""How a docs block is compared with what its command prints now: the words the same, a
number with a decimal point within the tolerance, any other number the same; a template
line by its form."""

from .compare import differences, matches_template
from .examples import Within, normalized


def test_decimals_may_move_within_the_tolerance_and_counts_may_not():
    shown = "A = 0.01: 2.4911 [2.3311, 2.6512] n=3"
    assert differences(shown, "A = 0.01: 2.4950 [2.3311, 2.6512] n=3", Within(0.01)) == []
    moved = differences(shown, "A = 0.01: 2.5950 [2.3311, 2.6512] n=3", Within(0.01))
    assert len(moved) == 1 and moved[0].startswith("2.4911 shown, 2.5950 printed")
    assert differences(shown, "A = 0.01: 2.4911 [2.3311, 2.6512] n=4", Within(1.0))


def test_other_words_or_another_line_count_differ():
    assert differences("supported x", "contradicted x")
    assert differences("one line", "one line\nand another")


def test_what_differs_between_two_runs_of_a_command_is_left_out():
    a = "[2026-12-01 13:59:09,328][HYDRA] sweep outputs/multirun/2026-12-02_00-07-27-560770: 6 jobs"
    b = "[2026-12-03 12:14:56,965][HYDRA] sweep outputs/multirun/2026-12-03_12-14-51-471022: 6 jobs"
    assert normalized(a) == normalized(b)
    assert normalized("┏━━━━┳━━┓ a   b") == normalized("┏━━┳━━━━━┓ a b")


def test_a_template_line_matches_any_value_in_its_placeholders_and_numbers():
    shown = "stopped at step <n> of trainer.max_steps=1500: val/seq_acc >= 0.985 at 2 (...)"
    assert matches_template(
        shown,
        "stopped at step 120 of trainer.max_steps=300: val/seq_acc >= 0.5 at 2 (0.51 at step 110)",
    )
    assert not matches_template(
        shown, "stopped at step 120 of trainer.max_steps=300: val/loss <= 0.5 at 2 (x)"
    )
    path = "run /abs/outputs/runs/<time> already finished (metrics.json)"
    assert matches_template(
        path, "run /tmp/x/runs/2026-12-03_12-00 already finished (metrics.json)"
    )
