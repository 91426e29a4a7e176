"""The steps to the target count the runs that did not diverge, as every other column does,
in the final-metrics table and in the learning-rate window alike."""

from transformer_lab.report import main
from transformer_lab.report.lr_window import best_lr_table
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
STEPS = "steps to val/seq_acc ≥ 0.9"


def make_sweep(folder):
    for (norm, lr, seed), (curve, diverged_at) in RUNS.items():
        final = curve[-1][1]
        metrics = {"val/seq_acc": final, "val/loss": 1.0 - final}
        metrics |= {"diverged": diverged_at is not None, "diverged_at_step": diverged_at}
        overrides = {"model/norm": norm, "model.lr": lr, "seed": seed}
        hand_made_job(folder, overrides, metrics, {"val/seq_acc": curve})
    return load_sweep(folder)


def column(table: str, name: str, lr: str = "model.lr") -> dict[tuple[str, str], str]:
    """``{(norm, learning rate): cell}`` of the markdown ``table``'s column ``name``."""
    lines = [[c.strip() for c in line.strip("| ").split(" | ")] for line in table.splitlines()]
    header, rows = lines[0], lines[2:]
    keys = [header.index("model.norm"), header.index(lr)]
    return {tuple(row[k] for k in keys): row[header.index(name)] for row in rows}


def test_a_diverged_run_is_left_out_of_the_steps_as_out_of_every_other_column(tmp_path):
    steps = column(configuration_table(make_sweep(tmp_path), 0.9), STEPS)
    assert steps == {
        ("post", "1e-3"): "199",  # not 149 ± 71, the mean of 199 and the diverged run's 99
        ("post", "1e-2"): "—",  # its one run diverged: nothing to count, not "never"
        ("pre", "1e-3"): "99 (1/2 runs)",  # of the runs that did not diverge
        ("pre", "1e-2"): "—",
    }


def test_the_learning_rate_window_counts_the_steps_as_the_table_does(tmp_path):
    sweep = make_sweep(tmp_path)
    best = column(best_lr_table(sweep, 0.9), STEPS, lr="best model.lr")
    table = column(configuration_table(sweep, 0.9), STEPS)
    assert best == {("post", "0.001"): "199", ("pre", "0.001"): "99 (1/2 runs)"}
    assert list(best.values()) == [table[(norm, "1e-3")] for norm, _ in best]


def test_the_report_says_the_steps_leave_out_the_diverged_runs(tmp_path):
    make_sweep(tmp_path)
    assert main([str(tmp_path)]) == 0
    text = (tmp_path / "report.md").read_text().split("## Final metrics")[1]
    assert "over the runs that did not diverge; (k/n runs): k of those n reached it" in text
