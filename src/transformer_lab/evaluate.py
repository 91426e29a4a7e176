"""Evaluate a checkpoint on its test split(s), greedy and beam search::

    python -m transformer_lab.evaluate ckpt_path=<run>/checkpoints/last.ckpt [beam_size=8 ...]

``ckpt_path`` may also be a run folder: its ``checkpoints/last.ckpt`` is taken, or with
``test_weights=best`` its ``checkpoints/best.ckpt`` (the best ``val/seq_acc``). The
checkpoint alone rebuilds the model and the data: the LightningModule and the datamodule
both saved their constructor arguments into it, so neither the original config nor the
run folder is needed. Every test split (``test``, and ``test_long`` where the run had one)
is decoded greedily and with beam search, through the very test stage training ends with,
so the greedy numbers equal the run's own ``metrics.json``. ``data.*`` changes the test
splits (``data.test_long_max_task_len=30``: lengths further past training than the run
tested, in the task's unit). Prints a metrics table titled with the checkpoint's step (and
a note when the checkpoint is older than the end of its run, as ``best.ckpt`` may be) and
sample generations, and writes ``eval.json`` (by default into the run folder).

The settings are ``conf/evaluate.yaml``, composed by Hydra, but without ``@hydra.main``:
an evaluation has no run folder of its own, and its paths are taken as typed
(:mod:`transformer_lab.config.entry_command`, shared with ``generate``).
"""

import logging
import sys
from pathlib import Path

import lightning as L
from omegaconf import DictConfig, OmegaConf
from rich.console import Console
from rich.table import Table

from transformer_lab.config.entry_command import EvaluationError, configure, refuse, usage
from transformer_lab.config.validation import InvalidSetting
from transformer_lab.console import command_terminal
from transformer_lab.data import SplitsDataModule
from transformer_lab.model.decoding import beam_search, check_beam_search
from transformer_lab.records import DamagedRecord, RecordNotWritten, fail, write_json
from transformer_lab.runs.checkpoint import find_checkpoint, load
from transformer_lab.runs.layout import recorded_metrics, run_folder_of
from transformer_lab.runs.order import natural_key
from transformer_lab.training import text_metrics
from transformer_lab.training.module import Seq2SeqLitModule

log = logging.getLogger(__name__)
PATHS = (
    "ckpt_path",
    "output",
    "data.test_path",
    "data.train_path",
    "data.val_path",
    "data.data_dir",
)  # settings that are paths, taken as typed


def with_test_splits(
    run_data: SplitsDataModule, test_splits: dict, model_positions: int
) -> SplitsDataModule:
    """The run's datamodule rebuilt with its test splits changed by ``test_splits``.

    Rebuilt from the run's settings, train and val come out as the run had them: each
    split depends on its own size and on the splits drawn before it, never on later ones.
    The new test split is drawn around both, so whatever its size it holds no source the
    run trained or validated on (and at the run's own size it is the run's test split);
    test_long has lengths past any of theirs. Which settings a run's data lets change is
    its class's ``evaluation_settings`` (``data=pairs``: another test file).
    """
    cls, data = type(run_data), dict(run_data.hparams)
    settings = cls.evaluation_settings + cls.file_settings
    foreign = [key for key in test_splits if key not in settings]
    if foreign:
        allowed = ", ".join(f"data.{key}" for key in settings) or "none"
        raise EvaluationError(
            f"data.{foreign[0]} is not a setting of this run's test splits ({cls.__name__}); "
            f"allowed: {allowed}"
        )
    if test_splits.get("test_long_max_task_len") and not test_splits.get(
        "test_long_size", data["test_long_size"]
    ):
        raise EvaluationError(
            "data.test_long_max_task_len needs a test_long split; this run had none, so give "
            "data.test_long_size too (allowed: >= 1)"
        )
    try:
        datamodule = cls(**run_data.changed_settings(test_splits))
        missing = datamodule.missing_positions(model_positions)
    except InvalidSetting as error:
        raise EvaluationError(str(error.within("data"))) from None
    if missing:
        longest = datamodule.hparams.test_long_max_task_len
        raise EvaluationError(
            f"data.test_long_max_task_len={longest} needs more positions than the model has "
            f"(max_len={model_positions}); allowed: data.test_long_max_task_len <= "
            f"{longest - missing}"
        )
    return datamodule


def decoded_metrics(
    trainer: L.Trainer, module: Seq2SeqLitModule, datamodule, beam_size: int, length_penalty
) -> dict[str, float]:
    """The test stage's metrics with ``seq_acc`` decoded by a ``beam_size`` beam (1: greedy)."""
    module.beam_size, module.length_penalty = beam_size, length_penalty
    trainer.test(module, datamodule=datamodule, verbose=False)
    return {
        k: float(trainer.callback_metrics[k])
        for k in sorted(trainer.callback_metrics, key=natural_key)
    }


def print_results(results: dict, module, datamodule, n_samples: int) -> None:
    beam = f"beam {results['beam_size']}"
    console = Console()
    step = results["global_step"]
    table = Table(
        title=f"{results['checkpoint']}\nstep {'unknown' if step is None else step}, "
        f"length penalty {results['length_penalty']}",
        caption="seq_acc, seq_acc_by_len/<words>, bleu and chrf depend on the decoding; the "
        "rest does not",
    )
    for column in ("metric", "greedy", beam):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for key, value in results["greedy"].items():
        table.add_row(key, f"{value:.4f}", f"{results['beam'][key]:.4f}")
    console.print(table)
    for split in datamodule.test_split_names if n_samples > 0 else ():
        batch = datamodule.sample(split, n_samples)
        src, max_new = batch["src"].to(module.device), batch["tgt_out"].size(1)
        greedy = module.model.generate(src, max_new)
        beamed = beam_search(
            module.model, src, results["beam_size"], max_new, results["length_penalty"]
        )
        samples = Table(title=f"sample generations ({split} split)")
        for column in ("source", "target", "greedy", beam):
            samples.add_column(column)
        source, target = datamodule.src_codec.decode, datamodule.tgt_codec.decode
        for src, *outputs in zip(
            batch["src"], batch["tgt_out"], greedy[:, 1:], beamed[:, 1:], strict=True
        ):
            samples.add_row(source(src.tolist()), *(target(ids.tolist()) for ids in outputs))
        console.print(samples)


def earlier_than_its_run(path: Path, global_step: int | None) -> str | None:
    """A line saying that the checkpoint is older than the end of its run (``metrics.json``
    has a larger step: e.g. ``best.ckpt``), so these are not the weights the run reported;
    None when it is the end, or nothing tells."""
    run = run_folder_of(path)
    recorded = recorded_metrics(run) if run else None
    if recorded is None or global_step is None or recorded["global_step"] <= global_step:
        return None
    return (
        f"note: this checkpoint is of step {global_step}, its run ended at step "
        f"{recorded['global_step']} (metrics.json): not the run's final weights"
    )


def evaluate(cfg: DictConfig) -> dict:
    """Evaluate ``cfg.ckpt_path``, write ``eval.json`` and return what it holds."""
    if OmegaConf.is_missing(cfg, "ckpt_path"):
        raise EvaluationError(
            "ckpt_path is required: python -m transformer_lab.evaluate "
            "ckpt_path=<run>/checkpoints/last.ckpt (or ckpt_path=<run folder>)"
        )
    path = find_checkpoint(cfg.ckpt_path, cfg.test_weights)
    # which of a run folder's checkpoints; None for a file, taken as given
    test_weights = cfg.test_weights if Path(cfg.ckpt_path).is_dir() else None
    module, datamodule, global_step = load(path)
    test_splits = {k: v for k, v in cfg.data.items() if v is not None}
    if test_splits:
        datamodule = with_test_splits(datamodule, test_splits, module.model.config.max_len)
    try:
        check_beam_search(module.model, cfg.beam_size, cfg.length_penalty)
    except ValueError as error:
        raise EvaluationError(str(error)) from None
    if cfg.batch_size is not None:
        datamodule.batch_size = cfg.batch_size
    try:
        datamodule.setup("test")  # a datamodule of files (data=pairs) reads them here
    except InvalidSetting as error:
        raise EvaluationError(str(error.within("data"))) from None
    trainer = L.Trainer(
        accelerator=cfg.accelerator,
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    results = {
        "checkpoint": str(path),
        "global_step": global_step,
        "weights_tested": test_weights,
        "beam_size": cfg.beam_size,
        "length_penalty": cfg.length_penalty,
        "data": test_splits,  # the test splits changed from the run's
        "greedy": decoded_metrics(trainer, module, datamodule, 1, 0.0),
        "beam": decoded_metrics(trainer, module, datamodule, cfg.beam_size, cfg.length_penalty),
    }
    if datamodule.reports_text:  # what makes the BLEU and chrF scores comparable
        scored = results["greedy"] | results["beam"]
        results["sacrebleu"] = text_metrics.signatures(text_metrics.effective(scored))
    # evaluations of other test splits go beside eval.json, not over it (a file by its name)
    # (the run's own files given where they moved to, file_settings, evaluate the same)
    changed = {
        k: Path(v).name if k.endswith("_path") else v
        for k, v in test_splits.items()
        if k not in datamodule.file_settings
    }
    name = "_".join(["eval", *(f"{k}={v}" for k, v in changed.items())]) + ".json"
    output = Path(cfg.output) if cfg.output else (run_folder_of(path) or path.parent) / name
    write_json(output, results, "the evaluation's metrics")
    print_results(results, module, datamodule, cfg.samples)
    for note in (
        text_metrics.short_outputs_note(results["greedy"]),
        earlier_than_its_run(path, global_step),
    ):
        if note:
            log.warning(note)
    log.info("wrote %s", output)
    return results


def cli(argv: list[str] | None = None) -> None:
    """``tlab-eval`` and ``python -m transformer_lab.evaluate``: what cannot be evaluated is
    one ``error:`` line and exit status 2; a record it cannot write (``eval.json`` on a full
    disk) or read (a damaged ``metrics.json``), one line and exit status 1."""
    argv = sys.argv[1:] if argv is None else argv
    if {"-h", "--help"} & set(argv):
        print(usage("evaluate", "tlab-eval"), end="")
        return
    try:
        cfg = configure(argv, "evaluate", PATHS)
        command_terminal()
        evaluate(cfg)
    except EvaluationError as error:
        refuse(error)
    except (RecordNotWritten, DamagedRecord) as error:
        fail(error)


if __name__ == "__main__":
    cli()
