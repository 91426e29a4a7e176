"""``<sweep>/sweep.json``: what the sweep's own process knows and its jobs cannot see.

A job of a parallel or cluster sweep runs in a process that its launcher started by a
command of its own (loky's ``popen_loky_posix``, submitit's ``_submit``), so its
``sys.argv`` is not the command the user typed; and a job's config holds its own
overrides (``model/norm=pre``), not the sweep's (``model/norm=pre,post``). So the sweep's
process writes both into the sweep folder when the multirun starts
(:class:`transformer_lab.sweep.record.RecordSweep`), and every job reads them back
(:meth:`transformer_lab.job.context.RunContext.from_hydra`): ``environment.json`` records
the command, a stopped job's resume line starts with its program, and HPARAMS marks the
keys the sweep varies as the ones that differ. The sweep's process also decides, once, how
many torch threads its jobs run with (:mod:`transformer_lab.sweep.threads`), so that no two
jobs of a sweep compute with different thread counts.
"""

from dataclasses import asdict, dataclass
from pathlib import Path

from transformer_lab.records import read_json, write_json

FILE = "sweep.json"


@dataclass(frozen=True)
class SweepRecord:
    """``orig_argv``/``argv``: ``sys.orig_argv``/``sys.argv`` of the sweep's process;
    ``swept``: the keys the sweep varies, one spelling each (``model.norm``); ``rule``: the
    fingerprint of the rule its hypotheses are judged by, as it was at the sweep's first
    start (:func:`transformer_lab.sweep.hypotheses.rule_hash`);
    ``torch_threads``/``threads_decided_by``: every job's torch threads and what decided
    them (None: a record written before the sweep decided them)."""

    orig_argv: tuple[str, ...]
    argv: tuple[str, ...]
    swept: frozenset[str]
    rule: str | None = None
    torch_threads: int | None = None
    threads_decided_by: str | None = None

    def write(self, sweep_dir: Path) -> Path:
        record = asdict(self) | {"swept": sorted(self.swept)}
        return write_json(sweep_dir / FILE, record, "the sweep's command and swept keys")

    @classmethod
    def read(cls, sweep_dir: Path) -> "SweepRecord | None":
        """The record of the sweep in ``sweep_dir``; None where there is none (a sweep
        started with a ``hydra.callbacks`` of its own, without the one that writes it)."""
        record = read_json(sweep_dir / FILE)
        if record is None:
            return None
        return cls(
            tuple(record["orig_argv"]),
            tuple(record["argv"]),
            frozenset(record["swept"]),
            record.get("rule"),  # None: a sweep started before the rule was recorded
            record.get("torch_threads"),
            record.get("threads_decided_by"),
        )
