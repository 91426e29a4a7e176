"""``hparams_search=optuna`` shared by workers started together on one SQLite storage: every
trial once, none failed, different first draws, one report over their folders; a worker
killed mid-trial leaves a trial that a later worker fails by its missed heartbeats."""

import os
import signal
import subprocess
import time

import optuna
import pytest
from omegaconf import OmegaConf

from transformer_lab.report import write_report
from transformer_lab.sweep.study import load_study

from ..command_line import (
    HANG_SECONDS,
    sigint_as_in_a_terminal,
    start_command,
    train_command,
    wait_until,
)

State = optuna.trial.TrialState
N_TRIALS, WORKERS = 4, 2
STUDY = [
    *("-m", "hparams_search=optuna", "experiment=smoke", "data=copy"),
    # a validation after 20 of 60 steps: the kill below lands inside a trial, after it
    *("trainer.max_steps=60", "trainer.val_check_interval=20", "optimized_metric=val/token_acc"),
    *("~callbacks.progress_bar", "~callbacks.attention_maps", "~callbacks.norm_comparison"),
    "hydra.launcher.n_jobs=1",
    # a killed worker's trial is stale 3 s after its last heartbeat
    *("hydra.sweeper.storage.heartbeat_interval=1", "hydra.sweeper.storage.grace_period=3"),
]


def worker(outputs, n_trials: int, core: int = 0) -> subprocess.Popen:
    """One worker of the study, in a process group of its own (its jobs with it), on one
    core where the system lets a process be pinned (Linux): as on a machine of its own, its
    jobs take one torch thread. Two workers that each counted every core would give two
    threads to each job, whose threads then wait for each other's (minutes, not seconds)."""
    command = train_command(outputs, *STUDY, f"hydra.sweeper.n_trials={n_trials}")

    def on_its_core() -> None:
        sigint_as_in_a_terminal()  # as start_command's own
        if hasattr(os, "sched_setaffinity"):
            cores = sorted(os.sched_getaffinity(0))
            os.sched_setaffinity(0, {cores[core % len(cores)]})

    return start_command(command, outputs.parent, start_new_session=True, preexec_fn=on_its_core)


def trial_of(job) -> int:
    """The trial number the sweeper gave ``job`` (its ``pruning.trial`` override)."""
    overrides = OmegaConf.load(job / ".hydra" / "overrides.yaml")
    (number,) = [int(o.split("=")[1]) for o in overrides if o.startswith("pruning.trial=")]
    return number


def jobs_of(worker_folder) -> list:
    return sorted(p.parent.parent for p in worker_folder.glob("*/.hydra/overrides.yaml"))


@pytest.mark.slow
def test_workers_share_one_study_and_a_dead_workers_trial_fails_by_heartbeat(tmp_path):
    outputs = tmp_path / "outputs"
    together = [worker(outputs, N_TRIALS, core) for core in range(WORKERS)]
    for process in together:
        output, _ = process.communicate(timeout=HANG_SECONDS)
        assert process.returncode == 0, output[-3000:]
        # Optuna's lines go through the lab's log, warnings only: no colour codes, no
        # "A new study created" then "Using an existing study" (console.quiet_optuna)
        assert "\x1b[" not in output
        assert "new study created" not in output and "existing study" not in output

    study_folder = outputs / "multirun" / "study-lr_warmup"
    workers = sorted(p.parent for p in study_folder.glob("*/study.json"))
    assert len(workers) == WORKERS
    trials = load_study(study_folder).get_trials(deepcopy=False)
    # workers that count the study at the same moment may each ask one more batch
    assert N_TRIALS <= len(trials) <= N_TRIALS + (WORKERS - 1) * 1
    assert [t.state for t in trials] == [State.COMPLETE] * len(trials)
    assert [t.number for t in trials] == list(range(len(trials)))
    ran = {w: [trial_of(job) for job in jobs_of(w)] for w in workers}
    assert sorted(n for numbers in ran.values() for n in numbers) == list(range(len(trials)))
    assert len({tuple(sorted(t.params.items())) for t in trials}) == len(trials)
    first = [trials[min(numbers)].params for numbers in ran.values()]
    assert first[0] != first[1]  # each worker drew its own first trial

    report = write_report(study_folder).read_text()
    assert f"the objective of each of its {len(trials)} finished trials" in report
    assert f"{len(trials)} jobs, {len(trials)} finished" in report
    for trial in trials:  # a row of the final metrics each
        assert (
            f"| {trial.params['optim.lr']} | {trial.params['optim.warmup_steps']} | 1 |" in report
        )

    # a worker killed (with its job) while its trial runs: the trial stays RUNNING ...
    done = len(trials)
    killed = worker(outputs, done + 1)
    before = set(study_folder.glob("*/*/checkpoints/best.ckpt"))
    # its trial in training: past its first validation, its heartbeats beating (every 1 s)
    wait_until(killed, lambda: set(study_folder.glob("*/*/checkpoints/best.ckpt")) - before)
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait()
    (left,) = load_study(study_folder).get_trials(deepcopy=False, states=(State.RUNNING,))
    # ... until its heartbeat is older than the grace period, when the next worker fails
    # it and runs the study's last trial in its stead
    time.sleep(3.5)
    last = worker(outputs, done + 1)
    output, _ = last.communicate(timeout=HANG_SECONDS)
    assert last.returncode == 0, output[-3000:]
    states = [t.state for t in load_study(study_folder).get_trials(deepcopy=False)]
    assert states[left.number] == State.FAIL
    assert states.count(State.COMPLETE) == done + 1 and len(states) == done + 2
