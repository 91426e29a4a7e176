"""The package is laid out by stage, and a folder imports only from folders earlier in the
flow (README, *Where things are*): config, model and data, training, callbacks, runs, job,
sweep, report. The entry points (the root's train.py and evaluate.py) and bench/ may import
any of them; tokens.py, console.py, records.py (every file the lab writes, atomically),
private_apis.py and sweep_process.py (a parallel sweep's pid, for its workers and the fault
tests) are imported by all."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "transformer_lab"
STAGES = ["config", "model", "data", "training", "callbacks", "runs", "job", "sweep", "report"]
PEERS = {"model": "data", "data": "model"}  # one stage: neither needs the other, both may
# root modules every stage may import
SHARED = {"tokens", "console", "records", "private_apis", "sweep_process"}
ROOT_MODULES = {"__init__.py", "train.py", "evaluate.py", "generate.py"} | {
    f"{name}.py" for name in SHARED
}


def imported_folders(path: Path) -> set[str]:
    """The package folders ``path`` imports from (``transformer_lab.<folder>...``)."""
    folders = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "transformer_lab" and len(parts) > 1:
                folders.add(parts[1])
    return folders


@pytest.mark.parametrize("stage", STAGES)
def test_a_stage_imports_only_earlier_stages(stage):
    allowed = {*STAGES[: STAGES.index(stage) + 1], PEERS.get(stage), *SHARED}
    for path in (PACKAGE / stage).rglob("*.py"):
        later = imported_folders(path) - allowed
        assert not later, f"{path.relative_to(PACKAGE)} imports from later stages: {later}"


def test_the_package_root_holds_only_the_entry_points_and_the_shared_modules():
    modules = {p.name for p in PACKAGE.glob("*.py")}
    assert modules <= ROOT_MODULES, modules - ROOT_MODULES
