"""environment.json's ``git_dirty``: the tracked code differs from the commit, nothing else."""

import subprocess

from transformer_lab.runs import environment


def git(cwd, *args):
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True)


def test_untracked_files_such_as_a_build_folder_leave_the_code_clean(tmp_path):
    package = tmp_path / "src" / "transformer_lab"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    (tmp_path / "build" / "lib").mkdir(parents=True)  # what `pip install .` leaves
    (tmp_path / "build" / "lib" / "copy.py").write_text("")
    (tmp_path / "notes.txt").write_text("")
    assert environment.git_state(package)["git_dirty"] is False
    (package / "__init__.py").write_text("changed = True\n")
    assert environment.git_state(package)["git_dirty"] is True
