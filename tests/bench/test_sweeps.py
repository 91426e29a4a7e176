"""The sweep row times the same jobs under both launchers (the sweeps themselves are
tested in tests/e2e; here they are stubbed, since a real pair takes minutes)."""

from transformer_lab.bench import sweeps


def test_both_launchers_run_the_same_jobs_and_the_ratio_is_basic_time_over_joblib_time(
    monkeypatch,
):
    launched = []

    def timed(contenders, **kwargs):
        for run in contenders.values():
            run()
        return {"joblib": 30.0, "basic": 60.0}

    monkeypatch.setattr(sweeps, "sweep", lambda *args: launched.append(args))
    monkeypatch.setattr(sweeps, "seconds_per_call", timed)
    monkeypatch.setattr(sweeps, "cores", lambda: 2)
    row = sweeps.launcher_speedup(jobs=4, steps=300, rounds=2)
    (parallel, overrides), (basic, same) = launched
    assert parallel == ["hydra/launcher=joblib", "hydra.launcher.n_jobs=2"]
    assert basic == ["hydra/launcher=basic"]
    assert overrides == same
    assert "seed=0,1,2,3" in overrides and "trainer.max_steps=300" in overrides
    assert (row.ours, row.peer, row.ratio) == (8.0, 4.0, 2.0)  # jobs per minute
    assert "joblib, 2 at a time / basic launcher (higher is better)" in row.name
