"""The package imports on an OS without ``fcntl`` (Windows): every module of the package, its
Hydra sweeper plugin and the tests' shared-build lock."""

import pkgutil
from pathlib import Path

import transformer_lab

from .command_line import python_code, run_command

TESTS = Path(__file__).resolve().parent
# third-party packages that pick their lock by OS (fcntl on POSIX, msvcrt on Windows):
# imported before fcntl is hidden, as they would have found their own on Windows
CHOOSE_THEIR_OWN = ["portalocker"]


def test_every_module_and_the_tests_lock_import_without_fcntl(tmp_path):
    found = pkgutil.walk_packages(transformer_lab.__path__, "transformer_lab.")
    # report/__main__.py runs the report when imported; what it imports is report's own
    modules = [m.name for m in found if m.name != "transformer_lab.report.__main__"]
    modules.append("hydra_plugins.transformer_lab_sweeper.shared_study_sweeper")  # our sweeper
    assert "transformer_lab.sweep.parallel" in modules  # a callback of every run
    code = (
        f"import importlib, runpy, {', '.join(CHOOSE_THEIR_OWN)}\n"
        "sys.modules['fcntl'] = None\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        f"runpy.run_path({str(TESTS / 'built_once.py')!r})\n"
        "import filelock\n"
        "assert not filelock.has_fcntl\n"  # the lock taken is the portable one
        "print('imported', len(sys.modules))\n"
    )
    done = run_command(python_code(code), tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("imported")
