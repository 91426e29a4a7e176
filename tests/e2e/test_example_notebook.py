"""examples/sweep_analysis.ipynb runs as written: its code cells, executed in order in one
namespace as a kernel would, open the shared tiny sweep (``SWEEP``, so that no training
runs twice) as a DataFrame, summarise it and draw its figure. Read as plain JSON, so the
test needs no Jupyter."""

import json
from pathlib import Path

import matplotlib
import pytest

pytestmark = pytest.mark.slow  # the shared tiny sweep (tests/e2e/conftest.py)

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "sweep_analysis.ipynb"


def test_the_example_notebook_opens_a_sweep_and_plots_it(tiny_sweep, monkeypatch):
    _, sweep = tiny_sweep
    monkeypatch.setenv("SWEEP", str(sweep))
    matplotlib.use("Agg")
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    namespace: dict = {}
    for cell in cells:
        if cell["cell_type"] == "code":
            exec(
                compile("".join(cell["source"]), f"{NOTEBOOK.name}[{cell['id']}]", "exec"),
                namespace,
            )
    runs = namespace["runs"]
    assert len(runs) == 4 and set(runs.status) == {"finished", "diverged"}  # lr 1e3 diverges
    assert list(namespace["summary"].index) == [0.001] and namespace["summary"]["count"][0.001] == 2
    assert len(namespace["ax"].collections) == 2  # one rate trained: its dots and its mean
    matplotlib.pyplot.close(namespace["figure"])
