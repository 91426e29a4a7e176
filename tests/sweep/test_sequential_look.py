"""The sequential sweeper's look reads the sweep as the report does. A finished job that
the report leaves out (here one that ran other code) is named in the sweep's log, and its
configuration counts one seed short, so the stage is not judged as if it were whole."""

import json

from omegaconf import OmegaConf

from hydra_plugins.transformer_lab_sequential.sequential_sweeper import SequentialSweeper

from ..report.conftest import hand_made_job

RULE = {
    "id": "large_lr_lowers_loss",
    "claim": "A learning rate of 1e-2 lowers the loss more than 1e-3.",
    "source": "a test",
    "metric": "val/loss",
    "key": "optim.lr",
    "values": [0.01, 0.001],
    "predicted": "A better",
}
CODE = {"transformer_lab": "0.1.0", "git_commit": "a" * 40, "git_code": "c" * 40}


def test_a_finished_job_left_out_of_the_look_is_named_and_its_stage_not_judged_whole(
    tmp_path, caplog
):
    config = OmegaConf.to_yaml({"hypotheses": [RULE]})
    for lr in ("0.01", "0.001"):
        for seed in range(4):
            metrics = {"val/loss": 1.0 + (lr == "0.001") + seed / 10, "diverged": False}
            job = hand_made_job(tmp_path, {"optim.lr": lr, "seed": seed}, metrics, config=config)
            other = lr == "0.001" and seed == 3
            code = CODE | {"git_code": "d" * 40} if other else CODE
            (job / "environment.json").write_text(json.dumps(code))
    sweeper = SequentialSweeper(None, "seed", 4, 8, 0.05, 0)
    with caplog.at_level("WARNING"):
        (verdict,) = sweeper.look(tmp_path, 4)
    assert (
        "left out of the look: optim.lr=0.001,seed=3: ran transformer_lab 0.1.0, src/ tree "
        f"{'d' * 12}; the sweep's other 7 jobs ran transformer_lab 0.1.0, src/ tree {'c' * 12}"
    ) in caplog.text
    assert verdict.unfinished == "a configuration has 3 of its 4 seeds"
