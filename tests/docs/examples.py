"""Every block of README.md and docs/ that shows what a command prints, with how to print it
now and how close the doc must stay to it.

Each :class:`Example` names its block (``<!-- example: <name> -->``, :mod:`.blocks`) and
makes the block's text anew from real commands (:attr:`Example.make`), the doc's own
commands where it shows them. The tests compare the doc with that text
(tests/docs/test_examples.py: the words the same, the numbers within the example's
:class:`Within`); ``python -m tests.docs.regenerate`` writes it into the doc, with a line
that says on which machine, at how many threads and under which torch it was made. The
commands that several blocks show run once (:class:`Runs`): the README's worked sweep and
your-data.md's cipher run.
"""

import contextlib
import datetime
import io
import json
import platform
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from hydra import initialize_config_module
from hydra.core.global_hydra import GlobalHydra
from hydra.types import RunMode
from omegaconf import open_dict

from ..command_line import python_module, run_command_here
from . import blocks
from .commands import logical_lines, run, transcript
from .compare import differences

# the callbacks that only draw (pictures, the norm twins, the bar): what the jobs train is the
# same without them, and a sweep of six jobs costs half as much
QUIET = ("~callbacks.progress_bar", "~callbacks.attention_maps", "~callbacks.norm_comparison")
REGENERATE = "tests.docs.regenerate"
LONGEST_PAIR = 5  # words: the cipher's training pairs have 2 to 5
CIPHER_ROOT = "/tmp/owndata_runs"  # where your-data.md's cipher run writes
TIMESTAMP = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\]")
RUN_FOLDER = re.compile(r"(?:/[\w.-]+)*/?(?:outputs|owndata_runs)/(runs|multirun)/[\d_-]{20,}")


@dataclass(frozen=True)
class Within:
    """How far a number with a decimal point may move from the doc's: ``absolute``, or
    ``relative`` of its size where that is more."""

    absolute: float
    relative: float = 0.0

    def __call__(self, shown: float) -> float:
        return max(self.absolute, self.relative * abs(shown))

    @property
    def text(self) -> str:
        relative = f" or {self.relative:.0%} of it, whichever is more" if self.relative else ""
        return f"{self.absolute:g} of each number{relative}"


EXACT = Within(0.0)


def normalized(text: str) -> str:
    """``text`` without what differs between any two runs of one command: the time of its
    log lines, its run folders' names, and how wide rich drew a table."""
    text = TIMESTAMP.sub("[<time>]", text)
    text = RUN_FOLDER.sub(lambda m: f"<outputs>/{m[1]}/<time>", text)
    text = re.sub(r"([━─])\1+", r"\1", text)
    return re.sub(r"[ \t]+", " ", text)


class Runs:
    """The commands that several blocks show, each run once in ``root``: the README's worked
    sweep, your-data.md's cipher run. ``store(name, make)`` keeps what ``make(folder)``
    returned (tests: :func:`tests.built_once.built_once`, once per test run)."""

    def __init__(self, root: Path, store: Callable[[str, Callable[[Path], dict]], dict]):
        self.root, self.store = root, store

    def readme_sweep(self) -> dict:
        return self.store("docs_readme_sweep", readme_sweep)

    def cipher(self) -> dict:
        return self.store("docs_cipher_run", cipher_run)


def readme_sweep(folder: Path) -> dict:
    """The README's worked sweep as its blocks say (the experiment file written by its
    heredoc, the sweep, the report), in ``folder``: what they printed and wrote."""
    sweep = blocks.find("README.md", "readme-sweep").text
    printed = ""
    for command in logical_lines(sweep):
        done = run(command, folder, *QUIET)
        if done is not None:
            assert done.returncode == 0, done.stderr[-3000:]
            printed = done.stdout + done.stderr
    (multirun,) = (folder / "outputs" / "multirun").iterdir()
    sweep_dir = multirun.relative_to(folder)
    report = run(f"python -m transformer_lab.report {sweep_dir}", folder)
    assert report.returncode == 0, report.stderr[-3000:]
    return {
        "printed": printed,
        "sweep": str(sweep_dir),
        "report": (multirun / "report.md").read_text(),
    }


def shown_as_in_the_doc(text: str, run_dir: str) -> str:
    """``text`` with the cipher run's outputs root where the doc ran it,
    ``/tmp/owndata_runs`` (your-data.md says so), and no trailing blanks."""
    text = text.replace(str(Path(run_dir).parents[1]), CIPHER_ROOT)
    return "\n".join(line.rstrip() for line in text.split("\n"))


def cipher_run(folder: Path) -> dict:
    """your-data.md's cipher run, as its block says, in a process (its terminal is the
    block's): its files made by the block's script, the run into ``folder/owndata_runs``."""
    script = blocks.find("docs/your-data.md", "your-data-cipher-commands").text
    printed, run_dir = "", None
    for command in logical_lines(script):
        done = run(command, folder, f"paths.outputs_root={folder / 'owndata_runs'}", process=True)
        if done is not None:
            assert done.returncode == 0, done.stderr[-3000:]
            printed = done.stdout + done.stderr
    (run_dir,) = (folder / "owndata_runs" / "runs").iterdir()
    return {"printed": printed, "run": str(run_dir)}


# -- what each block shows -----------------------------------------------------------------


def hydra_lines(printed: str, *starts: str) -> str:
    """The log lines of ``printed`` whose message starts with one of ``starts``."""
    wanted = [line for line in printed.split("\n") if re.search(r"\]\[HYDRA\] ", line)]
    return "\n".join(line for line in wanted if line.split("] ", 1)[1].startswith(starts))


def section(report: str, title: str) -> str:
    return report.split(f"## {title}\n")[1].split("\n## ")[0]


def verdict_lines(report: str) -> str:
    """The verdicts of the report's *Hypotheses* section, each with its numbers."""
    lines = section(report, "Hypotheses").split("\n")
    return "\n".join(line for line in lines if line.startswith(("- **", "  `")))


def table_columns(report: str, title: str, columns: list[str]) -> str:
    """The report's table of ``title`` cut to ``columns``."""
    rows = [line for line in section(report, title).split("\n") if line.startswith("|")]
    cells = [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]
    keep = [cells[0].index(column) for column in columns]
    return "\n".join("| " + " | ".join(row[i] for i in keep) + " |" for row in cells)


def readme_sweep_end(runs: Runs) -> str:
    return hydra_lines(runs.readme_sweep()["printed"], "sweep ", "tensorboard:")


def readme_report_command(runs: Runs) -> str:
    return f"python -m transformer_lab.report {runs.readme_sweep()['sweep']}"


def readme_hypothesis(runs: Runs) -> str:
    return verdict_lines(runs.readme_sweep()["report"])


def readme_table(runs: Runs) -> str:
    columns = blocks.find("README.md", "readme-table").text.split("\n")[0]
    names = [cell.strip() for cell in columns.strip("|").split("|")]
    return table_columns(runs.readme_sweep()["report"], "Final metrics", names)


def refusals(doc: str, name: str) -> Callable[[Runs], str]:
    """The block's ``$`` commands run (none of them trains), each with its lines."""

    def make(runs: Runs) -> str:
        work = runs.root / f"transcript_{name}"
        work.mkdir(parents=True, exist_ok=True)
        return transcript(blocks.find(doc, name).text, work)

    return make


def checked(doc: str, name: str) -> Callable[[Runs], str]:
    """The block's ``$`` train commands, each with the lines its check prints before any
    folder (:class:`~transformer_lab.sweep.checks.ConfigCheck`), without the training
    that follows: a warning of settings that cancel each other."""

    def make(runs: Runs) -> str:
        lines = []
        for line in blocks.find(doc, name).text.split("\n"):
            if line.startswith("$ python -m transformer_lab.train "):
                lines += [line, *check_lines(shlex.split(line)[4:])]
        return "\n".join(lines)

    return make


def check_lines(overrides: list[str]) -> list[str]:
    """What the check of a run with ``overrides`` prints, line by line."""
    from transformer_lab import train  # noqa: F401 (registers the config's resolvers)
    from transformer_lab.sweep.checks import ConfigCheck

    GlobalHydra.instance().clear()
    with initialize_config_module("transformer_lab.conf", version_base="1.3"):
        loader = GlobalHydra.instance().config_loader()
        config = loader.load_configuration("train", overrides, run_mode=RunMode.RUN)
        with open_dict(config):
            config.hydra.mode = RunMode.RUN  # as Hydra.run sets it
        said = io.StringIO()
        with contextlib.redirect_stderr(said):
            ConfigCheck().on_run_start(config)
    GlobalHydra.instance().clear()
    return said.getvalue().rstrip("\n").split("\n")


def with_cipher_data(name: str) -> Callable[[Runs], str]:
    """A transcript of ``name``'s commands beside the cipher run's files (``train.tsv``, and
    ``bad.tsv``: its 100 first lines, then one without a tab)."""

    def make(runs: Runs) -> str:
        cipher = Path(runs.cipher()["run"]).parents[2]
        lines = (cipher / "train.tsv").read_text().split("\n")
        (cipher / "bad.tsv").write_text("\n".join([*lines[:100], "no tab here", *lines[101:]]))
        return transcript(blocks.find("docs/your-data.md", name).text, cipher)

    return make


def your_data_cipher(runs: Runs) -> str:
    """What the block shows of the run's terminal: its tokenizer line, then from the end of
    the fit on, the tables without their oracle and per-position rows."""
    printed = runs.cipher()["printed"].split("\n")
    tokenizer = next(line for line in printed if "][INFO] - tokenizer: " in line)
    ended = next(line for line in printed if line.startswith("`Trainer.fit` stopped"))
    tables = printed[next(i for i, line in enumerate(printed) if "test metrics" in line) :]
    shown = [
        line
        for line in tables
        if line.strip() and "oracle" not in line and "by_pos" not in line
        if not line.startswith(("step ", "Testing", "`Trainer.fit`"))
    ]
    text = "\n".join([tokenizer, "...", ended, *shown])
    return shown_as_in_the_doc(text, runs.cipher()["run"])


def with_cipher_run(name: str) -> Callable[[Runs], str]:
    """A transcript of ``name``'s commands (generate) with the cipher run's checkpoint."""

    def make(runs: Runs) -> str:
        run_dir = runs.cipher()["run"]
        text = RUN_FOLDER.sub(run_dir, blocks.find("docs/run-folder.md", name).text)
        return shown_as_in_the_doc(transcript(text, Path(run_dir).parents[2], True), run_dir)

    return make


def without_predictions(text: str) -> str:
    """The sample table's prediction column left out: the model's outputs may differ by a
    word between machines, which the accuracy within its tolerance says."""
    return re.sub(r"^(│[^│]*│[^│]*│)[^│]*│", r"\1 <prediction> │", text, flags=re.MULTILINE)


def your_data_seen_pairs(runs: Runs) -> str:
    """The warning of the cipher run with the first 50 lines of ``train.tsv`` as its val
    pairs, its log line's time and place left as the block writes them (``[...]``): one
    step is enough, the warning comes before the first."""
    folder = Path(runs.cipher()["run"]).parents[2]
    lines = (folder / "train.tsv").read_text().split("\n")
    (folder / "val50.tsv").write_text("\n".join(lines[:50]) + "\n")
    command = "python -m transformer_lab.train data=pairs data.train_path=train.tsv"
    files = ("data.test_path=test.jsonl", "data.val_path=val50.tsv", "data.vocab_size=300")
    short = (*files, "trainer.max_steps=1", "trainer.val_check_interval=1", "samples=0")
    outputs = f"paths.outputs_root={folder / 'seen_pairs'}"
    done = run(command, folder, *short, *QUIET, outputs)
    assert done.returncode == 0, done.stderr[-3000:]
    (line,) = [out for out in done.stdout.split("\n") if "pairs also occur" in out]
    return re.sub(r"^\[[^\]]*\]", "[...]", line)


def beyond_training(text: str) -> str:
    """generate's outputs for inputs longer than every training pair (5 words) left out:
    past the training lengths a model's outputs differ between machines; what the doc
    claims of them is checked on its own (tests/docs/test_examples.py)."""
    shown, longer = [], False
    for line in text.split("\n"):
        if line.startswith('{"line"'):
            record = json.loads(line)
            if len(record["input"].split()) > LONGEST_PAIR:
                record |= {"output": "<beyond>", "tokens": 0, "log_prob": 0}
            line = json.dumps(record)
        elif longer:
            line = "<beyond>"
        longer = line.startswith("$ echo") and len(shlex.split(line)[2].split()) > LONGEST_PAIR
        shown.append(line)
    return "\n".join(shown)


@dataclass(frozen=True)
class Example:
    """A docs block (``name`` in ``doc``) and ``make``, which prints it anew; ``within``:
    how far its numbers may move (EXACT: none), said in its provenance line (none for
    an exact one); ``mask``: what of both texts is left out of the comparison;
    ``own_test``: checked by the test that runs its command already (:func:`problems`),
    not by tests/docs/test_examples.py."""

    name: str
    doc: str
    make: Callable[[Runs], str]
    within: Within = EXACT
    mask: Callable[[str], str] = lambda text: text
    own_test: bool = False

    def compared(self, text: str) -> str:
        return self.mask(normalized(text))


def problems(name: str, printed: str) -> list[str]:
    """How the block ``name`` differs from ``printed``, what its command prints now; empty
    where it says the same. The regeneration's command ends the list."""
    example = BY_NAME[name]
    block = blocks.find(example.doc, name)
    found = differences(example.compared(block.text), example.compared(printed), example.within)
    if example.within != EXACT and not (
        block.provenance and example.within.text in block.provenance
    ):
        found.append("no line under the block saying where its numbers come from")
    if found:
        found.append(f"{example.doc}: if the new output is right: python -m {REGENERATE} {name}")
    return found


def sweeps_verdicts(runs: Runs) -> str:
    """The verdicts of tests/e2e/test_hypotheses_sweep.py's sweep, which checks this block
    against its own run; run here for the regeneration."""
    return verdict_lines(runs.store("docs_hypotheses_sweep", hypotheses_sweep)["report"])


def hypotheses_sweep(folder: Path) -> dict:
    from ..e2e.test_hypotheses_sweep import sweep_command

    done = run_command_here(sweep_command(folder), folder)
    assert done.returncode == 0, done.stderr[-3000:]
    (sweep,) = (folder / "outputs" / "multirun").iterdir()
    return {"report": reported(sweep, folder)}


def sweeps_sequential(runs: Runs) -> str:
    """The verdict of tests/e2e/test_sequential_sweep.py's sweep, which checks
    this block against its own run; run here, to its end, for the regeneration."""
    return sequential_verdict(runs.store("docs_sequential_sweep", sequential_sweep)["report"])


def sequential_sweep(folder: Path) -> dict:
    from ..e2e.test_sequential_sweep import command

    done = run_command_here(command(folder), folder)
    assert done.returncode == 0, done.stderr[-3000:]
    return {"report": reported(folder / "sweep", folder)}


def sequential_verdict(report: str) -> str:
    """The entry of ``large_lr_lowers_loss`` of the report's verdicts."""
    lines = verdict_lines(report).split("\n")
    first = next(i for i, line in enumerate(lines) if "`large_lr_lowers_loss`" in line)
    return "\n".join(lines[first : first + 2])


def reported(sweep: Path, cwd: Path) -> str:
    done = run_command_here(python_module("transformer_lab.report", str(sweep)), cwd)
    assert done.returncode == 0, done.stderr[-3000:]
    return (sweep / "report.md").read_text()


def without_tests(text: str) -> str:
    """A verdict's p-values and the seeds its power asks for left out: where two settings
    differ by nothing, they move with every machine's rounding; its verdict and means stay."""
    text = re.sub(r"(p = |Holm-adjusted |other direction )[\d.e-]+", r"\1<p>", text)
    return re.sub(r"\d+ seeds per configuration", "<n> seeds per configuration", text)


EXAMPLES = [
    Example("readme-refusal", "README.md", refusals("README.md", "readme-refusal")),
    Example("readme-sweep-end", "README.md", readme_sweep_end),
    Example("readme-report-command", "README.md", readme_report_command),
    Example("readme-hypothesis", "README.md", readme_hypothesis, Within(0.05)),
    Example("readme-table", "README.md", readme_table, Within(0.05)),
    *(
        Example(name, "docs/configuration.md", refusals("docs/configuration.md", name))
        for name in (
            "configuration-refusals",
            "configuration-missing-setting",
            "configuration-typo",
        )
    ),
    Example(
        "configuration-cancelling",
        "docs/configuration.md",
        checked("docs/configuration.md", "configuration-cancelling"),
    ),
    Example("sweeps-launcher", "docs/sweeps.md", refusals("docs/sweeps.md", "sweeps-launcher")),
    Example("sweeps-verdicts", "docs/sweeps.md", sweeps_verdicts, Within(0.05), own_test=True),
    Example(
        "sweeps-sequential",
        "docs/sweeps.md",
        sweeps_sequential,
        Within(0.05),
        mask=without_tests,
        own_test=True,
    ),
    Example(
        "your-data-cipher",
        "docs/your-data.md",
        your_data_cipher,
        Within(0.1, 0.05),
        mask=without_predictions,
    ),
    Example("your-data-bad-line", "docs/your-data.md", with_cipher_data("your-data-bad-line")),
    Example("your-data-seen-pairs", "docs/your-data.md", your_data_seen_pairs),
    Example(
        "run-folder-generate",
        "docs/run-folder.md",
        with_cipher_run("run-folder-generate"),
        Within(0.5),
        mask=beyond_training,
    ),
    Example(
        "run-folder-unreadable-line",
        "docs/run-folder.md",
        with_cipher_run("run-folder-unreadable-line"),
    ),
]
BY_NAME = {example.name: example for example in EXAMPLES}


def provenance(example: Example, command: str) -> str | None:
    """The line under a block of numbers: the machine, threads and torch that printed them,
    and how far the tests let them move (None for a block without such numbers)."""
    if example.within == EXACT:
        return None
    cpu = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        names = [line for line in cpuinfo.read_text().split("\n") if line.startswith("model name")]
        cpu = names[0].split(":", 1)[1].strip() if names else cpu
    capability = torch.backends.cpu.get_cpu_capability()
    threads = torch.get_num_threads()
    date = datetime.date.today().isoformat()
    return (
        f"{blocks.PROVENANCE}`{command}` on {cpu} ({capability}), {threads} torch "
        f"thread{'s' * (threads > 1)}, torch {torch.__version__}, {date}; on another CPU or "
        f"thread count the numbers move: tests/docs holds them to {example.within.text}.</sub>"
    )
