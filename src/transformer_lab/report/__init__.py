"""The sweep report: ``python -m transformer_lab.report outputs/multirun/<sweep>``.

Reads every job of a Hydra multirun (its overrides, its config, ``metrics.json``,
TensorBoard scalars and ``norm_comparison.json``) and writes ``report.md`` plus PNG figures
into the sweep folder, and both into the TensorBoard run ``<sweep>/report/``, and the same
results as data, ``report.json`` and ``runs.csv`` (:mod:`.data`; :func:`load_runs` gives a
sweep's runs as a pandas DataFrame): first the
verdict on each hypothesis the experiment stated (``supported``, ``contradicted`` or
``inconclusive``, with its numbers; the sweep's hypotheses judged together), then final
metrics per configuration (how many runs learned, with the rate's exact interval; the mean
and a 95% confidence interval over seeds, n shown), the median steps to a target
accuracy as censored data (``val/seq_acc`` >= 0.9, or the sweep's outcome rule's
``val/token_acc``: :mod:`.progress`), diverged runs marked, how each configuration trained
(clipped steps, gradient norm, loss spikes), paired comparisons along every swept key
(the difference, its interval and a word), accuracy by length past the training lengths
(a ``test_long`` split, as in ``experiment=pe_extrapolation``), the learning-rate window
when the sweep varies ``optim.lr`` (a heatmap per architecture, the best learning rate per
configuration), and figures: the validation-loss curves grouped by ``model.norm``,
exact-match accuracy against length, and the gradient norm by layer at initialisation per
norm placement. It groups by whichever overrides vary, so it works on any sweep; jobs that
have not finished (still running, killed, failed) are listed, and the finished ones still
reported; jobs and values it cannot trust (a damaged record, no config, other code, a
metric that is not a number) are left out, each named (*Left out*). A hypothesis the sweep
cannot evaluate, or jobs that ran different arithmetic (torch version, processor, threads:
``--allow-mixed-arithmetic`` to compare them anyway), get one line and exit status 2.
"""

import argparse
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from omegaconf import OmegaConf

from transformer_lab.config.validation import ConfigError
from transformer_lab.console import quiet_library_notices
from transformer_lab.report.arithmetic import MixedArithmetic
from transformer_lab.report.comparisons import PRIMARY_METRICS, comparisons_section
from transformer_lab.report.data import load_runs as load_runs  # the documented API
from transformer_lab.report.data import write_data
from transformer_lab.report.figures import FIGURES
from transformer_lab.report.inputs import missing_metrics
from transformer_lab.report.judgement import Judgement, judge
from transformer_lab.report.lengths import length_table
from transformer_lab.report.lr_window import best_lr_table, lr_heatmaps
from transformer_lab.report.progress import CURVES, Progress
from transformer_lab.report.provenance import provenance_section
from transformer_lab.report.regions import regions_section
from transformer_lab.report.sweep import NotASweep, Sweep, group_runs
from transformer_lab.report.table import (
    TABLE_METRICS,
    configuration_table,
    output_change_table,
    stability_table,
)
from transformer_lab.report.tensorboard import write_tensorboard
from transformer_lab.report.verdicts import (
    SequentialRecordDamaged,
    Verdict,
    hypotheses_section,
)
from transformer_lab.runs.order import natural_key
from transformer_lab.runs.reader import job_folders
from transformer_lab.sweep.hypotheses import as_text
from transformer_lab.training.metric_names import STABILITY_METRICS

INTERVALS = (
    "A cell reads `mean [low, high] n=k`: the mean over the k runs of the configuration and "
    "its 95% confidence interval, Student t with k − 1 degrees of freedom, cut to the "
    "values the metric can take (an accuracy's to [0, 1]). The t interval's 95% assumes "
    "roughly normal values; where runs either learn or stall, read the `learned` column: "
    "the runs that learned by the outcome rule, k/n with Clopper–Pearson's exact interval "
    "of the rate (at least 95% for any true rate). One run reads `value n=1`: no interval."
)


NAMED_UNFINISHED = 20


def _unfinished_lines(sweep: Sweep) -> list[str]:
    """Each failed job with its reason; the jobs still to finish, the first
    :data:`NAMED_UNFINISHED` named (a grid paused early has hundreds)."""
    failed = [f"- `{r.name}`: failed: {r.failure_reason}" for r in sweep.unfinished if r.failure]
    waiting = [r.name for r in sweep.unfinished if not r.failure]
    lines = [
        f"- `{name}`: no metrics.json yet: still running, or stopped before the end"
        for name in waiting[:NAMED_UNFINISHED]
    ]
    if len(waiting) > NAMED_UNFINISHED:
        lines.append(
            f"- and {len(waiting) - NAMED_UNFINISHED} more jobs without metrics.json "
            "(`runs.csv` lists every job, `status` unfinished)"
        )
    return failed + lines


def _replicates(sweep: Sweep) -> str:
    """What the runs of one configuration have in common: say ``differ by seed`` only where
    some configuration has more than one job."""
    key = f"`{sweep.replicate_key}`"
    jobs = group_runs(sweep.runs, sweep.config_keys).values()
    if max(len(runs) for runs in jobs) > 1:
        return f"runs of one configuration differ by {key} (the replicate key)"
    return f"each configuration ran once, so there is no spread over {key}"


def render(judged: Judgement) -> tuple[str, list[tuple[str, str]]]:
    """``report.md`` of a judged sweep and its figures ``[(caption, file)]``, which it
    writes into the sweep folder on the way."""
    sweep, progress, verdicts = judged.sweep, judged.progress, judged.verdicts
    lines = [*_summary(sweep, verdicts, judged.warnings)]
    lines += _left_out_inputs(sweep, verdicts, progress)
    rule = judged.changed_rule, judged.unchecked_rule
    regions, region_figures = regions_section(verdicts, sweep.path)
    lines += [*hypotheses_section(verdicts, *rule), *regions, *_final_metrics(sweep, progress)]
    lines += _stability(sweep)
    lines += comparisons_section(sweep, judged.rows)
    lines += _length_generalization(sweep)
    lr_window, heatmaps = _lr_window(sweep, progress)
    lines += [*lr_window, *_left_out(sweep), *provenance_section(sweep)]
    figures, figure_lines = _figures(sweep)
    lines += [*figure_lines, *_output_change(sweep)]
    return "\n".join(lines) + "\n", region_figures + heatmaps + figures


def _summary(sweep: Sweep, verdicts: Sequence[Verdict], warnings: Sequence[str]) -> list[str]:
    """The title, what the sweep ran and varied, and what the reader must know first."""
    keys = ", ".join(f"`{k}`" for k in sweep.config_keys) or "nothing (one configuration)"
    left = len({item.job for item in sweep.left_out if item.metric is None})
    jobs = f"{len(sweep.runs) + left} jobs, {len(sweep.finished)} finished"  # pruned: below
    jobs += f", {left} left out (*Left out*)" if left else ""
    return [
        f"# Sweep report: {sweep.path.name}",
        "",
        f"{jobs}; configurations differ by {keys}; {_replicates(sweep)}.",
        *(line for warning in warnings for line in ("", warning)),
    ]


def _left_out_inputs(sweep: Sweep, verdicts: Sequence[Verdict], progress: Progress) -> list[str]:
    """The jobs and values the statistics leave out, each named: what :mod:`.inputs` left
    out on reading, and the metrics a run lacks that its configuration's others have."""
    watched = {*TABLE_METRICS, *PRIMARY_METRICS, *STABILITY_METRICS, progress.metric}
    watched |= {v.hypothesis.metric for v in verdicts}
    items = [*sweep.left_out, *missing_metrics(sweep.configurations(), watched)]
    if not items:
        return []
    return [
        "",
        "## Left out",
        "",
        f"{len(items)} input{'s' * (len(items) > 1)} the statistics below do not use, "
        "each named: a job's whole runs where its record is damaged, its config is missing "
        "or it ran other code than the sweep's; one metric of a run where that value is not "
        "a number or missing.",
        "",
        *(item.line for item in items),
    ]


def _final_metrics(sweep: Sweep, progress: Progress) -> list[str]:
    return [
        "",
        "## Final metrics",
        "",
        f"{INTERVALS} Diverged runs are counted, not averaged, in every column. Steps: the "
        f"first validation with `{progress.metric}` ≥ {progress.target:g}, as TensorBoard's "
        "step (Lightning "
        "logs the validation after update n at step n − 1), the median over the runs, in "
        "which a run that never reached it counts as beyond its `trainer.max_steps`, and so "
        "does a diverged run (what it reached before it diverged is not a run that trains): "
        "`> m` when such runs reach the middle, the median only known to be larger; (k/n): "
        "k of the n runs reached it.",
        "",
        configuration_table(sweep, progress),
    ]


def _stability(sweep: Sweep) -> list[str]:
    stability = stability_table(sweep)
    if not stability:
        return []
    spikes = "callbacks.training_stability"
    return [
        "",
        "## Training stability",
        "",
        "Over every finished run, diverged ones too: `train/clip_fraction`, the fraction "
        "of steps whose gradient norm before clipping exceeded `trainer.gradient_clip_val` "
        f"({_settings(sweep, 'trainer.gradient_clip_val')}; 0 with clipping off), so a "
        "run that would diverge but stalls under the clip shows here; "
        "`train/grad_norm_max`, the largest gradient norm before clipping; "
        "`train/loss_spikes`, how many times the training loss rose above "
        f"{_settings(sweep, f'{spikes}.spike_factor')} times the median of the "
        f"{_settings(sweep, f'{spikes}.spike_window')} steps before it (`{spikes}`). "
        "Cells as above.",
        "",
        stability,
    ]


def _length_generalization(sweep: Sweep) -> list[str]:
    lengths = length_table(sweep)
    if not lengths:
        return []
    return [
        "",
        "## Length generalization",
        "",
        "Mean exact match (greedy) at each `test_long` length, all past the "
        "longest training source; the accuracy-vs-length figure below draws "
        "these with the in-range lengths.",
        "",
        lengths,
    ]


def _lr_window(sweep: Sweep, progress: Progress) -> tuple[list[str], list[tuple[str, str]]]:
    """The best learning rate per configuration and its heatmaps (written on the way),
    where the sweep varies ``optim.lr``; their lines and ``[(caption, file)]``."""
    best_lrs = best_lr_table(sweep, progress)
    if not best_lrs:
        return [], []
    heatmaps = lr_heatmaps(sweep, sweep.path, progress)
    lines = [
        "",
        "## Learning-rate window",
        "",
        f"Best learning rate per configuration: the highest mean final `{progress.metric}` "
        "over its runs, a diverged run counting as 0; rates that share it (to three places) "
        "are a tie, named as one, with no best among them. The highest mean describes the "
        "runs; which differences the seeds show is for *Paired comparisons* and "
        "*Hypotheses* to say.",
        "",
        best_lrs,
    ]
    return lines + _images(heatmaps), heatmaps


def _left_out(sweep: Sweep) -> list[str]:
    """The jobs the tables above leave out: not finished, or pruned by the study."""
    lines = []
    if sweep.unfinished:
        lines += ["", "## Not finished", "", *_unfinished_lines(sweep)]
    if sweep.pruned:
        lines += ["", "## Pruned", "", "Trials the study's pruner stopped early, left out above:"]
        lines += ["", *(f"- `{run.name}`: {run.metrics['stop_reason']}" for run in sweep.pruned)]
    return lines


def _figures(sweep: Sweep) -> tuple[list[tuple[str, str]], list[str]]:
    """Every figure of :data:`FIGURES`, written into the sweep folder, and its lines."""
    figures = [figure for make in FIGURES for figure in make(sweep, sweep.path)]
    return figures, ["", "## Figures", *_images(figures)]


def _images(figures: list[tuple[str, str]]) -> list[str]:
    return [
        line
        for caption, file in figures
        for line in ("", f"{caption}:", "", f"![{caption}]({file})")
    ]


def _output_change(sweep: Sweep) -> list[str]:
    changes = output_change_table(sweep.architectures())
    if not changes:
        return []
    return [
        "",
        "## Output change under weight noise at initialisation",
        "",
        "Mean squared change of the logits when every weight matrix gets noise "
        "of its std times the configured perturbation (Liu et al., 2020), "
        "per norm placement of the twins:",
        "",
        changes,
    ]


def _settings(sweep: Sweep, key: str) -> str:
    """The values of the setting ``key`` in the finished runs' resolved configs (``?``
    for a run without one), ``"1.0"`` or ``"0.5, 1.0"``."""
    configs = (r.settings(key.split(".")[0]) for r in sweep.finished)
    values = {
        "?" if config is None else as_text(OmegaConf.select(config, key, default=None))
        for config in configs
    }
    return ", ".join(sorted(values, key=natural_key))


def write_report(path: Path, **options) -> Path:
    """Write the report of the sweep in ``path`` (``options``: :func:`.judgement.judge`'s):
    ``report.md`` and its figures, ``report.json`` and ``runs.csv`` (:mod:`.data`) and the
    TensorBoard run ``report``; NotASweep, MixedArithmetic or a ConfigError (a hypothesis
    the sweep cannot evaluate) before anything is written."""
    judged = judge(path, **options)
    text, figures = render(judged)
    report = path / "report.md"
    report.write_text(text)
    write_data(judged)
    sections = text.split("\n## ")
    tables = "\n## ".join(s for s in sections if not s.startswith("Figures"))  # images instead
    write_tensorboard(path, tables, figures)
    return report


@contextmanager
def reading_line(sweep: Path) -> Iterator[None]:
    """``report: reading the <n> jobs of <sweep> ...`` on a terminal while the report is
    made, erased before what it prints: a grid's report reads and judges hundreds of jobs
    for a minute or more before its first output. Nothing where stderr is no terminal (a
    pipe, a log, a test's capture), where the line would stay, before an error's one line."""
    jobs = len(job_folders(sweep)) if sweep.is_dir() else 0
    shown = jobs > 0 and sys.stderr.isatty()
    if shown:
        sys.stderr.write(f"report: reading the {jobs} jobs of {sweep} ...")
        sys.stderr.flush()
    try:
        yield
    finally:
        if shown:
            sys.stderr.write("\r\033[K")  # back to the line's start, and erase it
            sys.stderr.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m transformer_lab.report",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("sweep", type=Path, help="a multirun folder: outputs/multirun/<time>")
    parser.add_argument(
        "--metric",
        choices=CURVES,
        help="the accuracy to count steps to and to find the learning-rate window by "
        "(val/seq_acc; a sweep whose outcome rule is on val/token_acc: that)",
    )
    parser.add_argument(
        "--target",
        type=float,
        help="the value of that accuracy to count steps to (0.9; the outcome rule's "
        "threshold where the accuracy is its)",
    )
    parser.add_argument(
        "--replicate-key", default="seed", help="the override whose runs are averaged (seed)"
    )
    parser.add_argument(
        "--allow-mixed-code",
        action="store_true",
        help="keep jobs that ran other code than most of the sweep's in the statistics",
    )
    parser.add_argument(
        "--allow-mixed-arithmetic",
        action="store_true",
        help="compare jobs that ran different torch versions, processors or thread counts",
    )
    args = parser.parse_args(argv)
    quiet_library_notices()
    try:
        with reading_line(args.sweep):
            report = write_report(
                args.sweep,
                metric=args.metric,
                target=args.target,
                replicate_key=args.replicate_key,
                allow_mixed_code=args.allow_mixed_code,
                allow_mixed_arithmetic=args.allow_mixed_arithmetic,
            )
    except (NotASweep, MixedArithmetic, SequentialRecordDamaged, ConfigError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(report.read_text())  # the tables, readable in the terminal too
    print(f"report: {report}")
    return 0
