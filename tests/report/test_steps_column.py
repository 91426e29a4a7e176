"""The steps to the target are censored data: a median in which a run that never reached the
target, or diverged, counts as beyond its max_steps, in the final-metrics table and in the
learning-rate window alike."""

from transformer_lab.report import main
from transformer_lab.report.lr_window import best_lr_table
from transformer_lab.report.progress import Progress
from transformer_lab.report.sweep import load_sweep
from transformer_lab.report.table import configuration_table

from .conftest import hand_made_job

# (norm, lr, seed) -> (val/seq_acc curve, diverged at step or None)
RUNS = {
    ("post", "1e-3", 0): ([(99, 0.5), (199, 0.95)], None),
    ("post", "1e-3", 1): ([(49, 0.3), (99, 0.92)], 120),  # reached 0.9, then diverged
    ("pre", "1e-3", 0): ([(99, 0.91), (199, 0.97)], None),
    ("pre", "1e-3", 1): ([(99, 0.5), (199, 0.6)], None),  # never reached 0.9
    ("post", "1e-2", 0): ([(99, 0.95)], 150),
    ("pre", "1e-2", 0): ([(99, 0.1)], 110),
}
STEPS = "median steps to val/seq_acc ≥ 0.9 (reached)"
BY_SEQUENCE = Progress("val/seq_acc", 0.9)  # the default
CONFIG = "trainer:\n  max_steps: 200\n"


def make_sweep(folder):
    for (norm, lr, seed), (curve, diverged_at) in RUNS.items():
        final = curve[-1][1]
        metrics = {"val/seq_acc": final, "val/loss": 1.0 - final}
        metrics |= {"diverged": diverged_at is not None, "diverged_at_step": diverged_at}
        overrides = {"model/norm": norm, "optim.lr": lr, "seed": seed}
        hand_made_job(folder, overrides, metrics, {"val/seq_acc": curve}, CONFIG)
    return load_sweep(folder)


def column(table: str, name: str, lr: str = "optim.lr") -> dict[tuple[str, str], str]:
    """``{(norm, learning rate): cell}`` of the markdown ``table``'s column ``name``."""
    lines = [[c.strip() for c in line.strip("| ").split(" | ")] for line in table.splitlines()]
    header, rows = lines[0], lines[2:]
    keys = [header.index("model.norm"), header.index(lr)]
    return {tuple(row[k] for k in keys): row[header.index(name)] for row in rows}


def test_a_diverged_run_counts_as_one_that_never_reached_the_target(tmp_path):
    steps = column(configuration_table(make_sweep(tmp_path), BY_SEQUENCE), STEPS)
    assert steps == {
        # 199 and the diverged run, not its 99 before it diverged: beyond 200, so > 199.5
        ("post", "1e-3"): "> 199 (1/2)",
        ("post", "1e-2"): "> 200 (0/1)",  # its one run diverged: it did not train
        ("pre", "1e-3"): "> 149 (1/2)",  # 99 and a run that never got there: > (99 + 200) / 2
        ("pre", "1e-2"): "> 200 (0/1)",
    }


def test_the_learning_rate_window_counts_the_steps_as_the_table_does(tmp_path):
    sweep = make_sweep(tmp_path)
    best = column(best_lr_table(sweep, BY_SEQUENCE), STEPS, lr="best optim.lr")
    table = column(configuration_table(sweep, BY_SEQUENCE), STEPS)
    assert best == {("post", "0.001"): "> 199 (1/2)", ("pre", "0.001"): "> 149 (1/2)"}
    assert list(best.values()) == [table[(norm, "1e-3")] for norm, _ in best]


def test_the_report_says_how_the_steps_count_the_runs_that_did_not_get_there(tmp_path):
    make_sweep(tmp_path)
    assert main([str(tmp_path)]) == 0
    text = (tmp_path / "report.md").read_text().split("## Final metrics")[1]
    assert "a run that never reached it counts as beyond its `trainer.max_steps`" in text
    assert "and so does a diverged run" in text
    assert "(k/n): k of the n runs reached it" in text
