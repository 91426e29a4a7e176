"""The lab-wide family: the hypotheses of several sweeps adjusted together by Holm's method,
each p-value valid for its design, beside each sweep's own verdict; the summary written
between its markers in a Markdown file; a sweep the report has not judged is one line."""

import json

import pytest

from transformer_lab.report import main as report
from transformer_lab.report.family import holm
from transformer_lab.report.lab import BEGIN, END, lab_verdicts, main

from .test_equivalence import CLOSE, MIXED
from .test_equivalence import make_sweep as equivalence_sweep
from .test_verdicts import make_sweep as norm_sweep


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory):
    norms = norm_sweep(tmp_path_factory.mktemp("norms"))
    close = tmp_path_factory.mktemp("close")
    equivalence_sweep(close, CLOSE)
    mixed = tmp_path_factory.mktemp("mixed")
    equivalence_sweep(mixed, MIXED)
    for sweep in (norms, close, mixed):
        assert report([str(sweep)]) == 0
    return [norms, close, mixed]


def test_every_hypothesis_of_every_sweep_is_one_family(sweeps):
    verdicts = lab_verdicts(sweeps)
    assert len(verdicts) == 6  # 4 + 1 + 1 hypotheses
    p = [v.hypothesis["design_p"][0] for v in verdicts]
    q = [v.hypothesis["design_p"][1] for v in verdicts]
    adjusted = holm(p + q)
    assert [v.adjusted for v in verdicts] == pytest.approx(adjusted[:6])
    assert [v.adjusted_other for v in verdicts] == pytest.approx(adjusted[6:])
    words = {v.hypothesis["id"]: (v.hypothesis["verdict"], v.word) for v in verdicts}
    # three p-values of 1/256 lead the 12 tests: 12/256, 11/256 and 10/256, all below 5%,
    # so what their sweeps decided stands across the lab; the rest stays as it was
    assert verdicts[0].adjusted == pytest.approx(12 / 256)
    assert words["pre_learns_faster"] == ("supported", "supported")
    assert words["post_learns_faster"] == ("contradicted", "contradicted")
    assert words["sandwich_beats_post"] == ("inconclusive (n=1)", "inconclusive (n=1)")
    close, mixed = verdicts[4:]
    assert (close.hypothesis["verdict"], close.word) == ("supported", "supported")
    assert (mixed.hypothesis["verdict"], mixed.word) == ("inconclusive", "inconclusive")


def test_the_summary_is_written_between_its_markers(sweeps, tmp_path, capsys):
    results = tmp_path / "results.md"
    results.write_text(f"# Results\n\nbefore\n{BEGIN}\nold table\n{END}\nafter\n")
    assert main([*map(str, sweeps), "--into", str(results)]) == 0
    text = results.read_text()
    assert text.startswith("# Results\n\nbefore\n") and text.endswith(f"{END}\nafter\n")
    assert "old table" not in text
    assert "| `norms" in text and "(12 tests)" in text
    assert "Holm's method over both one-sided p-values of each of the 6 hypotheses" in text


def test_a_sweep_without_its_report_json_is_one_line(sweeps, tmp_path, capsys):
    assert main([str(sweeps[0]), str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"error: {tmp_path / 'report.json'}: no such file; allowed: a sweep the report has "
        f"judged (python -m transformer_lab.report {tmp_path})\n"
    )


def test_an_exploratory_hypothesis_is_no_member(sweeps, tmp_path):
    record = json.loads((sweeps[1] / "report.json").read_text())
    record["hypotheses"][0]["exploratory"] = True
    (tmp_path / "report.json").write_text(json.dumps(record))
    verdicts = lab_verdicts([sweeps[0], tmp_path])
    assert verdicts[-1].word == "exploratory: not a member"
    assert all(v.adjusted is not None for v in verdicts[:-1])  # a family of 4: 8 tests
    assert verdicts[0].adjusted == pytest.approx(8 / 256)
