"""Bad input on the command line: one clear message before training, exit 2, and nothing
written before is touched (the same checks called directly: tests/job/). One of each kind
starts a process; the rest run the same command in the test process."""

import pytest

from ..command_line import run_train, run_train_here

TINY = [
    "data.train_size=256",
    "data.val_size=32",
    "data.test_size=32",
    "trainer.max_steps=2",
    "trainer.val_check_interval=2",
    "~callbacks.progress_bar",
    "samples=0",
]

# The true command line for one of each kind: (overrides, fragments the one error message
# must contain): a value the model refuses, a missing checkpoint, and an unknown group option
# (found by composing the command line before Hydra does: tests/e2e/test_typos.py).
ON_THE_COMMAND_LINE = [
    (["model.d_model=30"], ["model.d_model=30: not divisible by num_heads=4", "multiple"]),
    (["ckpt_path=/nowhere/last.ckpt"], ["ckpt_path='/nowhere/last.ckpt' does not exist"]),
    (["model/norm=middle"], ["model/norm='middle': no such option", "post, pre"]),
]


def snapshot(root):
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def with_an_earlier_run(outputs_root) -> None:
    earlier = outputs_root / "runs" / "earlier"
    (earlier / "checkpoints").mkdir(parents=True)
    (earlier / "metrics.json").write_text('{"test/seq_acc": 1.0}\n')
    (earlier / "checkpoints" / "last.ckpt").write_bytes(b"an earlier run's checkpoint")


@pytest.mark.slow
def test_on_the_command_line_a_bad_input_is_one_message_and_loses_nothing(tmp_path):
    with_an_earlier_run(tmp_path / "outputs")
    earlier = tmp_path / "outputs" / "runs" / "earlier"
    before = snapshot(earlier)

    for overrides, fragments in ON_THE_COMMAND_LINE:
        result = run_train(tmp_path / "outputs", *TINY, *overrides)
        assert result.returncode != 0, overrides
        assert "Traceback" not in result.stderr, (overrides, result.stderr[-2000:])
        for fragment in fragments:
            assert fragment in result.stderr, (overrides, fragment, result.stderr[-2000:])
        assert "Epoch" not in result.stdout + result.stderr, overrides  # no training started
    assert snapshot(earlier) == before
    assert list((tmp_path / "outputs").rglob("*.ckpt")) == [earlier / "checkpoints" / "last.ckpt"]


# each its own start: (arguments, the one line the start writes to stderr)
REFUSED_STARTS = {
    "max_steps=abc": (
        ["trainer.max_steps=abc"],
        "error: trainer.max_steps='abc': not an integer; allowed: an integer in [1, 1000000000]",
    ),
    "max_steps=-1": (  # -1 would train forever: max_epochs is -1
        ["trainer.max_steps=-1"],
        "error: trainer.max_steps=-1: out of range; allowed: an integer in [1, 1000000000]",
    ),
    "max_steps=0": (
        ["trainer.max_steps=0"],
        "error: trainer.max_steps=0: out of range; allowed: an integer in [1, 1000000000]",
    ),
    "max_steps=2.5": (
        ["trainer.max_steps=2.5"],
        "error: trainer.max_steps=2.5: not an integer; allowed: an integer in [1, 1000000000]",
    ),
    "lr=abc": (["optim.lr=abc"], "error: optim.lr='abc': not a number; allowed: a number > 0"),
    "lr=-1": (["optim.lr=-1"], "error: optim.lr=-1: out of range; allowed: a number > 0"),
    "seed=abc": (
        ["seed=abc"],
        "error: seed='abc': not an integer; allowed: an integer in [0, 4294967295]",
    ),
    "d_model=31": (  # the network's own check, through the LightningModule
        ["model.d_model=31"],
        "error: model.d_model=31: not divisible by num_heads=2; allowed: a multiple of num_heads",
    ),
    "ckpt_path": (
        ["ckpt_path=/nowhere/last.ckpt"],
        "error: ckpt_path='/nowhere/last.ckpt' does not exist; allowed: an existing checkpoint "
        "file, 'last', or null",
    ),
    "no train_path": (  # a ??? of conf/ left out: named, with what to give (its comment)
        ["data=pairs"],
        "error: data.train_path='???': not given; data=pairs needs it; allowed: "
        "data.train_path=<the training pairs: a .tsv/.txt (source<TAB>target) or "
        ".jsonl/.ndjson file>",
    ),
    "sweep": (  # the second job is bad: the sweep stops before the first one starts
        ["-m", "optim.lr=1e-3,abc"],
        "error: optim.lr='abc': not a number; allowed: a number > 0 (sweep job: optim.lr=abc)",
    ),
}


@pytest.fixture(scope="module")
def refused_starts(tmp_path_factory):
    """Each of REFUSED_STARTS run from the command line, in an outputs_root of its own
    that holds an earlier run: ``{case: (result, outputs_root, files before)}``."""
    starts = {}
    for case, (arguments, _) in REFUSED_STARTS.items():
        outputs_root = tmp_path_factory.mktemp("refused") / "outputs"
        with_an_earlier_run(outputs_root)
        before = snapshot(outputs_root)
        result = run_train_here(outputs_root, *arguments, "experiment=smoke")  # -m first
        starts[case] = (result, outputs_root, before)
    return starts


@pytest.mark.slow
@pytest.mark.parametrize("case", REFUSED_STARTS)
def test_a_bad_value_on_the_command_line_is_one_line_exit_2_and_no_folder(refused_starts, case):
    result, outputs_root, before = refused_starts[case]
    _, line = REFUSED_STARTS[case]
    assert result.returncode == 2, result.stderr[-2000:]
    assert error_lines(result.stderr) == [line]
    message = line.removeprefix("error: ")
    assert (result.stdout + result.stderr).count(message) == 1  # printed once, not logged too
    assert "Traceback" not in result.stderr
    assert snapshot(outputs_root) == before  # the earlier run as it was, and nothing new:
    folders = {str(p.relative_to(outputs_root)) for p in outputs_root.rglob("*") if p.is_dir()}
    assert folders == {"runs", "runs/earlier", "runs/earlier/checkpoints"}  # no multirun/ either


@pytest.mark.slow
def test_a_setting_only_the_build_refuses_is_printed_once(tmp_path):
    """A callback's setting is checked by its constructor when the run builds it, after
    Hydra made the run folder: still one line and exit 2, not a log line as well."""
    result = run_train_here(
        tmp_path / "outputs", *TINY, "experiment=smoke", "callbacks.layer_stats.every_n_steps=0"
    )
    message = "callbacks.layer_stats.every_n_steps=0: out of range; allowed: an integer >= 1"
    assert result.returncode == 2, result.stderr[-2000:]
    assert error_lines(result.stderr) == [f"error: {message}"]
    assert (result.stdout + result.stderr).count(message) == 1
    assert "Epoch" not in result.stdout + result.stderr
