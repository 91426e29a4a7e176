"""environment.json: what ran a run, never an error where something cannot be known."""

import json
import subprocess

import torch

from transformer_lab.runs import environment


def git(cwd, *args):
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True)


NO_CHECKOUT = {"git_commit": None, "git_code": None, "git_dirty": None, "git_changes": None}


def commit(root):
    """Everything in the repository at ``root`` committed."""
    git(root, "add", ".")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")


def committed_checkout(root):
    """``root/src/transformer_lab``, a package committed in a new repository at ``root``."""
    package = root / "src" / "transformer_lab"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    git(root, "init", "-q")
    commit(root)
    return package


def test_a_package_in_a_checkout_gets_its_commit_and_dirty_flag(tmp_path):
    package = committed_checkout(tmp_path)
    state = environment.git_state(package)
    assert len(state["git_commit"]) == 40 and state["git_dirty"] is False
    (package / "__init__.py").write_text("x = 1\n")
    assert environment.git_state(package)["git_dirty"] is True


def test_untracked_files_such_as_a_build_folder_leave_the_code_clean(tmp_path):
    """``git_dirty`` means the tracked code differs from the commit, nothing else."""
    package = committed_checkout(tmp_path)
    (tmp_path / "build" / "lib").mkdir(parents=True)  # what `pip install .` leaves
    (tmp_path / "build" / "lib" / "copy.py").write_text("")
    (tmp_path / "notes.txt").write_text("")
    assert environment.git_state(package)["git_dirty"] is False
    (package / "__init__.py").write_text("changed = True\n")
    assert environment.git_state(package)["git_dirty"] is True


def test_an_installed_copy_inside_some_repository_gets_no_commit(tmp_path):
    """A venv inside a checkout holds installed copies; their code is not that commit's."""
    package = tmp_path / ".venv" / "lib" / "python3" / "site-packages" / "transformer_lab"
    package.mkdir(parents=True)
    git(tmp_path, "init", "-q")
    assert environment.git_state(package) == NO_CHECKOUT


def test_outside_any_repository_the_commit_is_null_not_an_error(tmp_path):
    assert environment.git_state(tmp_path / "a" / "b") == NO_CHECKOUT


def test_the_code_is_the_tree_of_src_which_a_commit_of_anything_else_leaves_unchanged(tmp_path):
    """A sweep's kept results or the docs committed while it runs leave its code as it was,
    and so does editing them; committing a change of the code does not."""
    package = committed_checkout(tmp_path)
    first = environment.git_state(package)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "results.md").write_text("a verdict\n")
    commit(tmp_path)
    (tmp_path / "docs" / "results.md").write_text("an edit, not committed\n")
    after_docs = environment.git_state(package)
    assert after_docs["git_commit"] != first["git_commit"]
    assert after_docs["git_code"] == first["git_code"] and len(first["git_code"]) == 40
    assert after_docs["git_dirty"] is False
    (package / "__init__.py").write_text("changed = True\n")
    commit(tmp_path)
    assert environment.git_state(package)["git_code"] != first["git_code"]


def test_two_uncommitted_edits_of_the_code_are_two_codes_and_the_same_edit_is_one(tmp_path):
    package = committed_checkout(tmp_path)
    assert environment.git_state(package)["git_changes"] is None  # clean
    (package / "__init__.py").write_text("lr = 1\n")
    one = environment.git_state(package)
    (package / "__init__.py").write_text("lr = 2\n")
    other = environment.git_state(package)
    assert one["git_dirty"] is other["git_dirty"] is True
    assert one["git_code"] == other["git_code"]  # the same commit's code, edited
    assert one["git_changes"] != other["git_changes"]
    assert environment.code_identity(one) != environment.code_identity(other)
    (package / "__init__.py").write_text("lr = 1\n")
    assert environment.git_state(package)["git_changes"] == one["git_changes"]


def test_the_record_holds_versions_machine_and_command():
    record = environment.collect(["python", "-m", "transformer_lab.train", "seed=1"])
    keys = (
        "python",
        "torch",
        "lightning",
        "hydra-core",
        "transformer_lab",
        "platform",
        "cpu",
        "cpu_capability",
        "torch_threads",
        "command",
        "start_time",
        "git_commit",
        "git_code",
        "git_dirty",
        "git_changes",
    )
    assert set(keys) <= record.keys()
    assert record["torch_threads"] >= 1
    assert record["cpu_capability"] == torch.backends.cpu.get_cpu_capability()  # kernels
    assert record["command"] == "python -m transformer_lab.train seed=1"
    json.dumps(record)  # JSON-ready


def test_a_resumed_run_keeps_its_first_record_and_appends_the_resumption(tmp_path):
    first = {"transformer_lab": "0.1.0", "git_commit": "a", "git_dirty": False}
    second = {"transformer_lab": "0.1.0", "git_commit": "b", "git_dirty": False}
    environment.write(tmp_path, first)
    environment.write(tmp_path, second)
    record = json.loads((tmp_path / "environment.json").read_text())
    assert record["git_commit"] == "a" and record["resumed"] == [second]
    assert environment.code_identities(record) == {
        ("0.1.0", "commit", "a", False),  # records without git_code: their commit
        ("0.1.0", "commit", "b", False),
    }
    resumed_on_the_same_code = {**first, "git_code": "c"}
    resumed_on_the_same_code["resumed"] = [{**second, "git_code": "c"}]
    assert environment.code_identities(resumed_on_the_same_code) == {("0.1.0", "code", "c", False)}
