"""A ``data=pairs`` checkpoint works from any folder: trained on ``mine.tsv`` as typed in one
folder, it is evaluated and generated from in another, its moved file is given again, and a
changed byte in the file is refused in one line naming the file and both sha256s. What its
tokenizer never saw, generate names per line."""

import hashlib
import json

import pytest

from ..command_line import python_module, run_command_here, run_train_here

pytestmark = pytest.mark.slow
TRAINING = [
    "data=pairs",
    "data.train_path=mine.tsv",  # relative to the folder it is trained in
    "data.tokenizer=char",
    "data.val_size=20",
    "data.test_size=20",
    "data.batch_size=16",
    "model.d_model=32",
    "model.d_ff=64",
    "model.num_heads=2",
    "trainer.max_steps=4",
    "trainer.val_check_interval=4",
    "trainer.accelerator=cpu",
    "~callbacks.progress_bar",
    "samples=0",
]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """``(run folder, the training file, another working folder)``."""
    here, elsewhere = tmp_path_factory.mktemp("trained_here"), tmp_path_factory.mktemp("other")
    words = ["cat", "dog", "bird", "fish", "sees", "likes"]
    lines = [f"{a} {b}\t{b} {a}" for a in words for b in words] * 4  # 144 pairs
    (here / "mine.tsv").write_text("\n".join(lines) + "\n")
    result = run_train_here(here / "outputs", *TRAINING, cwd=here)
    assert result.returncode == 0, result.stderr[-3000:]
    (run,) = (here / "outputs" / "runs").iterdir()
    return run, here / "mine.tsv", elsewhere


def evaluate_from(folder, run, *settings):
    command = python_module("transformer_lab.evaluate", f"ckpt_path={run}", "samples=0", *settings)
    return run_command_here(command, folder)


def test_evaluate_and_generate_work_from_another_folder(trained):
    run, _, elsewhere = trained
    result = evaluate_from(elsewhere, run)
    assert result.returncode == 0, result.stderr[-3000:]
    greedy = json.loads((run / "eval.json").read_text())["greedy"]
    recorded = json.loads((run / "metrics.json").read_text())
    assert greedy["test/loss"] == pytest.approx(recorded["test/loss"], rel=1e-5)
    generated = run_command_here(
        python_module("transformer_lab.generate", f"ckpt_path={run}"), elsewhere, input="cat dog\n"
    )
    assert generated.returncode == 0, generated.stderr[-3000:]
    assert len(generated.stdout.splitlines()) == 1


def test_generate_names_what_the_tokenizer_never_saw_line_by_line(trained):
    run, _, elsewhere = trained
    command = python_module("transformer_lab.generate", f"ckpt_path={run}")
    result = run_command_here(command, elsewhere, input="cat dog\ncat QQ dog!\n")
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(result.stdout.splitlines()) == 2  # both decoded, the outputs aligned
    assert result.stderr.strip() == "warning: line 2: unseen in training, read as <unk>: 'Q', '!'"
    jsonl = run_command_here([*command, "format=jsonl"], elsewhere, input="cat QQ dog!\n")
    assert json.loads(jsonl.stdout)["unseen"] == ["Q", "!"]


def test_a_moved_file_is_given_again_and_a_changed_one_is_refused_with_both_hashes(trained):
    run, mine, elsewhere = trained
    moved = elsewhere / "moved.tsv"
    mine.rename(moved)
    gone = evaluate_from(elsewhere, run)
    assert gone.returncode == 2
    assert gone.stderr.strip() == (
        f"error: data.train_path='{mine}': no such file (the run's, by the absolute path it "
        "recorded); allowed: the same file where it is now: data.train_path=<file>"
    )
    given = evaluate_from(elsewhere, run, "data.train_path=moved.tsv")
    assert given.returncode == 0, given.stderr[-3000:]
    assert (run / "eval.json").is_file()  # the run's own data: its own eval.json

    before = hashlib.sha256(moved.read_bytes()).hexdigest()
    content = bytearray(moved.read_bytes())
    content[0] = ord("b") if content[0] != ord("b") else ord("c")  # one byte
    moved.write_bytes(bytes(content))
    after = hashlib.sha256(bytes(content)).hexdigest()
    changed = evaluate_from(elsewhere, run, "data.train_path=moved.tsv")
    assert changed.returncode == 2
    assert changed.stderr.strip() == (
        f"error: data.train_path='{moved}': its content changed since the run read it (sha256 "
        f"{before} then, {after} now); allowed: the file the run read, unchanged, or a new run"
    )
