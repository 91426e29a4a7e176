"""A sweep is launched and expanded by its own config, whatever its jobs' configs say.

Hydra builds the sweeper and the launcher once, from the sweep's config (the command line
without its sweep overrides), and hands the launcher every job; a job's own
``hydra/launcher`` and ``hydra.sweeper.params``, which an experiment may set
(``override /hydra/launcher: joblib``, its grid), are composed into the job's config but
never launch or expand anything (hydra issue #2946). In ``-m experiment=a,b`` neither
experiment's launcher nor its grid applies, while each job's callbacks read the launcher
of its own config (:mod:`transformer_lab.sweep.parallel`) and act as if it ran there:
threads pinned for jobs side by side that run one after another. So such a sweep is
refused before it starts, saying what to do instead.
"""

from omegaconf import DictConfig, OmegaConf

from transformer_lab.config.validation import InvalidSetting

WHY = "Hydra launches and expands every job of a sweep with the sweep's own settings (hydra #2946)"


def _first_difference(ours, theirs, key: str) -> tuple[str, object, object]:
    """The dotted key of the first leaf in which two config containers differ, and its two
    values (None where one side lacks it)."""
    if isinstance(ours, dict | None) and isinstance(theirs, dict | None) and ours != theirs:
        ours, theirs = ours or {}, theirs or {}
        name = next(k for k in [*ours, *theirs] if ours.get(k) != theirs.get(k))
        return _first_difference(ours.get(name), theirs.get(name), f"{key}.{name}")
    return key, ours, theirs


def check_launcher_applies(sweep: DictConfig, job: DictConfig) -> None:
    """InvalidSetting if a job's config (its ``hydra`` node ``job``) composes a launcher or
    sweeper, or their settings (an experiment's grid), other than the ``sweep``'s, which
    launch it."""
    for node in ("launcher", "sweeper"):
        ours, theirs = (OmegaConf.to_container(h[node], resolve=False) for h in (sweep, job))
        if ours == theirs:
            continue
        group = f"hydra/{node}"
        chosen, running = job.runtime.choices[group], sweep.runtime.choices[group]
        if chosen != running:
            raise InvalidSetting(
                group,
                chosen,
                f"chosen by this job's config, not by the sweep's; {WHY}, here {group}={running}",
                f"one {node} for every job, on the command line (-m {group}={chosen} ...), "
                "or one sweep per experiment",
            )
        key, sweeps, jobs = _first_difference(ours, theirs, f"hydra.{node}")
        raise InvalidSetting(
            key,
            jobs,
            f"set by this job's config, not by the sweep's; {WHY}, here {sweeps}",
            "one value for every job, on the command line, or one sweep per experiment",
        )
