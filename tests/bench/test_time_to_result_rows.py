"""``python -m transformer_lab.bench --time-to-result`` runs only the rows of the main job's
time to its result, in one run: the stop at the target, fused AdamW and ``compile``
(``--quick`` leaves out the two that take minutes, saying why)."""

import json

from transformer_lab.bench.__main__ import main


def test_only_the_time_to_result_rows_run(tmp_path, one_thread):
    rows = main(["--quick", "--time-to-result", "--json", str(tmp_path / "rows.json")])
    assert [row.name for row in rows] == [
        "train tokens/s, d16 post-norm: fused AdamW / for-loop AdamW (higher is better)",
        "train tokens/s: torch.compile / eager [unavailable: skipped by --quick (compiling "
        "takes minutes)]",
        "main job seconds, start to exit: stop at the target / whole max_steps "
        "[unavailable: skipped by --quick (two main jobs take minutes)]",
    ]
    fused = json.loads((tmp_path / "rows.json").read_text())[0]
    assert fused["ours"] > 0 and fused["peer"] > 0
