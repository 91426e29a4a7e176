"""Which checkpoint ``ckpt_path`` means, where a resumed run keeps writing, and the command
that resumes an interrupted one.

``ckpt_path=last`` is the newest ``checkpoints/last.ckpt`` of an earlier run *of the same
experiment*: a run (or sweep job) under ``paths.outputs_root`` whose saved
``.hydra/config.yaml`` equals the current config but for ``ckpt_path``. A resumed run
continues in the folder its checkpoint came from, so TensorBoard shows one curve going on
from the checkpoint's step instead of a second run starting over; the folder Hydra made
for the new start is removed (:func:`continue_in`). A run that has ended (its
``metrics.json``) is not resumed unless the config asks for more steps than it took
(:class:`RunFinished`).

A job started again in the folder it ran in goes on from that folder's own ``last.ckpt``
without being told (:func:`own_last_checkpoint`): a SLURM job that submitit requeued after
its time limit or a preemption (``callbacks/interrupt.py`` saved that checkpoint at the
step reached), or a command run again with the same fixed ``hydra.run.dir``.
"""

import logging
import re
import shlex
import shutil
import signal
from pathlib import Path

import hydra
from omegaconf import DictConfig

from transformer_lab.callbacks import Interrupted
from transformer_lab.config.validation import ConfigError, InvalidSetting
from transformer_lab.job.context import RunContext
from transformer_lab.job.ownership import experiment
from transformer_lab.records import DamagedRecord, read_config, write_json
from transformer_lab.runs.layout import last_checkpoint, recorded_metrics, stop_record
from transformer_lab.training.checkpoint_io import UnusableCheckpoint, read_checkpoint

log = logging.getLogger(__name__)


class CheckpointNotFound(ConfigError):
    pass


class RunFinished(Exception):
    """The checkpoint's run has ended: resuming it would train nothing new, only test it
    again and add a second set of TensorBoard points (or, from a checkpoint older than its
    end, train its last steps again). ``metrics`` is its ``metrics.json``, what the job
    returns instead, so that a sweep run again gets each finished job's objective."""

    def __init__(self, run: Path, metrics: dict):
        self.run, self.metrics = run, metrics
        step = metrics["global_step"]
        further = shell_word(f"ckpt_path={quote_for_hydra(str(last_checkpoint(run).resolve()))}")
        if metrics.get("diverged"):
            message = f"run {run} diverged at step {metrics['diverged_at_step']} (metrics.json)"
            message += "; nothing to resume"
        elif metrics.get("stopped_early"):
            message = (
                f"run {run} stopped at step {step}: {metrics['stop_reason']} (metrics.json); "
                f"nothing to resume. To train further: {further} stop_at_seq_acc=null"
            )
        else:
            message = (
                f"run {run} already finished at step {step} (metrics.json); nothing to "
                f"resume. To train further: {further} trainer.max_steps=<more "
                f"than {step}>"
            )
        super().__init__(message)


def check_unfinished(run: Path, max_steps: int, stops_at_target: bool = True) -> None:
    """Raise :class:`RunFinished` if ``run`` diverged, ended at ``max_steps`` or later, or
    stopped early at its ``val/seq_acc`` target while the config would stop it there again
    (``stops_at_target``: it resumes with its count of validations at the target)."""
    metrics = recorded_metrics(run)
    if metrics is None:
        return
    at_target = metrics.get("stopped_early") and not metrics.get("diverged")
    ended = metrics.get("diverged") or max_steps <= metrics["global_step"]
    if ended or (at_target and stops_at_target):
        raise RunFinished(run, metrics)


def _runs(outputs_root: Path):
    yield from outputs_root.glob("runs/*")
    yield from outputs_root.glob("multirun/*/*")


def find_last_checkpoint(cfg: DictConfig) -> Path:
    """The newest ``last.ckpt`` of a run of this experiment under ``paths.outputs_root``.
    A run whose saved config is damaged cannot be matched: a warning names it."""
    wanted = experiment(cfg)
    candidates = []
    for run in _runs(Path(cfg.paths.outputs_root)):
        last = last_checkpoint(run)
        if not last.is_file():
            continue
        try:
            saved = read_config(run / ".hydra" / "config.yaml")
        except DamagedRecord as damaged:
            log.warning("ckpt_path=last: %s", damaged)
            continue
        if saved is not None and experiment(saved) == wanted:
            candidates.append(last)
    if not candidates:
        raise CheckpointNotFound(
            f"ckpt_path=last: no run of this experiment under {cfg.paths.outputs_root}/ has "
            f"checkpoints/last.ckpt; give ckpt_path=<file> or start without ckpt_path"
        )
    return max(candidates, key=lambda p: p.stat().st_mtime)


def resolve_checkpoint(cfg: DictConfig) -> Path | None:
    """The checkpoint file to resume from, or None to start fresh."""
    if cfg.ckpt_path is None:
        return None
    if cfg.ckpt_path == "last":
        return find_last_checkpoint(cfg)
    path = Path(cfg.ckpt_path)
    if not path.is_file():
        raise CheckpointNotFound(
            f"ckpt_path={cfg.ckpt_path!r} does not exist; allowed: an existing checkpoint "
            f"file, 'last', or null"
        )
    return path


def usable_checkpoint(path: Path, setting: str, value) -> dict:
    """The contents of the checkpoint to resume, or InvalidSetting naming ``setting=value``
    (``ckpt_path=...``, or the run folder a requeued job resumes) and why it is none: one
    line for a hostile or foreign file, on every way a run resumes."""
    try:
        return read_checkpoint(path)
    except UnusableCheckpoint as error:
        named = "" if str(path) == str(value) else f"{path}: "  # ckpt_path=last, a run folder
        raise InvalidSetting(
            setting,
            value,
            f"{named}{error}",
            "a checkpoint a run of the lab wrote, 'last', or null",
        ) from error


def own_last_checkpoint(started_in: Path) -> Path | None:
    """``last.ckpt`` in the job's own folder, the one Hydra gave this start, if there is one.

    A fresh start's folder is new (named by the time, to the microsecond) and holds none.
    One that does is this job started again: a job requeued by submitit runs the same
    pickled launcher call, whose config carries Hydra's cached ``${now:}`` of the sweep's
    start, so it resolves the same sweep folder and, named by its overrides, the same job
    folder; or a command run again with a fixed ``hydra.run.dir``. ``SLURM_RESTART_COUNT``
    is not needed: the folder says it, also for a job requeued by hand or another launcher.
    """
    last = last_checkpoint(started_in)
    return last if last.is_file() else None


def learned_names(cfg: DictConfig) -> tuple[str, ...]:
    """The data settings that the config's data learns from its files (``data=pairs``:
    the tokenizers)."""
    return getattr(hydra.utils.get_class(cfg.data._target_), "learned_settings", ())


def learned_settings(cfg: DictConfig, checkpoint: dict | None) -> dict:
    """What the data of the run being resumed learnt from its files (``data=pairs``: the
    tokenizers), from the checkpoint's contents: a resumed run reads its data with the
    tokenizer its weights were trained with, whatever the files say now. Empty for a fresh
    start and for data that learns nothing."""
    names = learned_names(cfg)
    if checkpoint is None or not names:
        return {}
    saved = checkpoint.get("datamodule_hyper_parameters", {})
    return {name: saved[name] for name in names if saved.get(name) is not None}


def _log_handlers_in(folder: Path) -> list[logging.FileHandler]:
    """The root logger's file handlers that write into ``folder`` (Hydra's job log)."""
    handlers = (h for h in logging.getLogger().handlers if isinstance(h, logging.FileHandler))
    return [h for h in handlers if Path(h.baseFilename).parent.resolve() == folder.resolve()]


def _remove_if_only(folder: Path, names: set[str]) -> None:
    """Remove ``folder`` if it holds nothing but ``names``: no stray folder is left, and
    nothing else is lost."""
    if {p.name for p in folder.iterdir()} <= names:
        shutil.rmtree(folder)


def continue_in(run: Path, started_in: Path) -> None:
    """Move a resumed start from the folder Hydra made for it into ``run``.

    Hydra creates ``started_in`` (``.hydra/`` and the log) before the job can know it
    resumes. What the log holds so far is appended to ``run``'s log and the root logger's
    handler for it is replaced by one appending there (same level and format), and
    ``started_in`` is removed if it holds nothing else, so a resume leaves no stray
    folder; ``run/.hydra`` keeps the config the run was started with.
    """
    if started_in.resolve() == run.resolve():
        return
    moved = {".hydra"}
    root = logging.getLogger()
    for handler in _log_handlers_in(started_in):
        log = Path(handler.baseFilename)
        root.removeHandler(handler)
        handler.close()
        continued = run / log.name
        with continued.open("a") as file:
            file.write(log.read_text())
        appending = logging.FileHandler(continued, mode="a")
        appending.setLevel(handler.level)
        appending.setFormatter(handler.formatter)
        root.addHandler(appending)
        moved.add(log.name)
    _remove_if_only(started_in, moved)


def discard_start(started_in: Path, run: Path) -> None:
    """Remove the folder Hydra made for a start that has nothing to do (``run`` has
    finished), leaving ``run`` as it is. Its log handlers go with it, so that no later
    record opens the log again."""
    if started_in.resolve() == run.resolve():
        return
    handlers = _log_handlers_in(started_in)
    for handler in handlers:
        logging.getLogger().removeHandler(handler)
        handler.close()
    _remove_if_only(started_in, {".hydra", *(Path(h.baseFilename).name for h in handlers)})


def resume_command(checkpoint: Path, context: RunContext) -> str:
    """The command line that resumes this job from ``checkpoint``: the program as it was
    started, the job's own overrides (one job of a sweep: its overrides only), and
    ``ckpt_path``, quoted for the shell and for Hydra."""
    hydra, orig_argv, argv = context.hydra, context.orig_argv, context.argv
    if Path(argv[0]).suffix == ".py":  # python [-m] ...: the interpreter as invoked
        program = list(orig_argv[: len(orig_argv) - len(argv) + 1])
    else:  # a console script: by name when that name finds this very script
        found = shutil.which(Path(argv[0]).name)
        same = found and Path(found).resolve() == Path(argv[0]).resolve()
        program = [Path(argv[0]).name if same else argv[0]]
    options = [
        f"--config-dir={source.path}"
        for source in hydra.runtime.config_sources
        if source.provider == "command-line"
    ]
    if hydra.job.config_name != "train":
        options.append(f"--config-name={hydra.job.config_name}")
    overrides = [o for o in context.overrides if not o.startswith("ckpt_path=")]
    overrides.append(f"ckpt_path={quote_for_hydra(str(checkpoint.resolve()))}")
    return " ".join(shell_word(word) for word in [*program, *options, *overrides])


def shell_word(word: str) -> str:
    """``word`` as a shell reads it back, quoted only where it must be and then the way a
    person reads most easily: ``'...'`` around a word without ``'``, ``"..."`` around one
    that holds ``'`` (Hydra's quotes, ``"ckpt_path='/x/seed=1/last.ckpt'"``) but nothing a
    shell expands in double quotes; ``shlex.quote`` (``'"'"'``) only past that."""
    quoted = shlex.quote(word)
    if quoted == word or "'" not in word or re.search(r'[$`"\\!]', word):
        return quoted
    return f'"{word}"'


def quote_for_hydra(value: str) -> str:
    """``value`` as Hydra's override parser reads it back verbatim: as it is where that is
    plain (letters, digits, ``_./-``), else quoted. A sweep's run folders are named by their
    overrides (``model.norm=pre,seed=1``), and an unquoted ``=`` or ``,`` is override syntax."""
    if re.fullmatch(r"[\w./-]+", value, re.ASCII):
        return value
    quote = '"' if "'" in value else "'"
    return f"{quote}{value}{quote}"


def record_stop(stop: Interrupted, context: RunContext) -> dict:
    """Say where the run stopped and the command that goes on from there, in one line on
    the terminal and in ``stopped.json`` (read back by the sweep's end-of-job line and its
    summary; a resume that goes on removes it). Rank zero only."""
    command = resume_command(stop.checkpoint, context)
    print(f"{stop}: saved {stop.checkpoint}; resume with: {command}", flush=True)
    record = {
        "signal": signal.Signals(stop.signum).name,
        "step": stop.step,
        "checkpoint": str(stop.checkpoint),
        "resume": command,
    }
    write_json(stop_record(context.output_dir), record, "where the run stopped")
    return record
