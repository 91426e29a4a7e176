"""Evaluate a checkpoint on its test split(s), greedy and beam search::

    python -m transformer_lab.evaluate ckpt_path=<run>/checkpoints/last.ckpt

``ckpt_path`` may also be a run folder (its ``checkpoints/last.ckpt`` is taken). The
checkpoint alone rebuilds the model and the data: the LightningModule and the datamodule
both saved their constructor arguments into it, so neither the original config nor the
run folder is needed. Every test split (``test``, and ``test_long`` where the run had one)
is decoded greedily and with beam search, through the very test stage training ends with,
so the greedy numbers equal the run's own ``metrics.json``. ``data.*`` changes the test
splits (``data.test_long_max_len=30``: lengths further past training than the run
tested). Prints a metrics table and sample generations and writes ``eval.json`` (by
default into the run folder).
"""

import json
import logging
import sys
from pathlib import Path

import hydra
import lightning as L
import torch
from omegaconf import DictConfig, OmegaConf
from rich.console import Console
from rich.table import Table

from transformer_lab.console import LIGHTNING_INFO, natural_key, quiet_library_notices
from transformer_lab.data.datamodule import SyntheticDataModule
from transformer_lab.lit_module import Seq2SeqLitModule
from transformer_lab.model.decoding import beam_search, check_beam_search
from transformer_lab.run_folder import last_checkpoint, run_folder_of
from transformer_lab.tokens import detokenize

log = logging.getLogger(__name__)
# what Lightning writes into every checkpoint of a fit with a datamodule, and reads back
PARTS = (
    "state_dict",
    "hyper_parameters",
    "datamodule_hyper_parameters",
    "pytorch-lightning_version",
)


class EvaluationError(ValueError):
    """What was asked cannot be evaluated: a missing or foreign checkpoint, a bad setting."""


def find_checkpoint(path: str | Path) -> Path:
    """``path`` if it is a file, or the last checkpoint of the run folder ``path``."""
    path = Path(path)
    if path.is_dir():
        path = last_checkpoint(path)
    if not path.is_file():
        raise EvaluationError(
            f"ckpt_path: {path} does not exist; give a checkpoint file or a run folder "
            "that holds checkpoints/last.ckpt"
        )
    return path


def _one_line(error: Exception, limit: int = 400) -> str:
    """An exception's message on one line, cut at ``limit`` characters."""
    text = " ".join(str(error).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def read_checkpoint(path: Path) -> dict:
    """The checkpoint's contents, or an EvaluationError that names what makes it unusable.

    Read before Lightning builds from it, because ``load_from_checkpoint`` does not tell
    these apart: an unreadable file and weights that do not fit the model both end in a
    RuntimeError there, and a checkpoint without ``datamodule_hyper_parameters`` gives a
    datamodule of default settings. (So the file is read three times; for this project's
    models, megabytes.)
    """
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # pickle, zip and torch each raise their own kind
        raise EvaluationError(
            f"{path} is not a checkpoint that loads with weights_only=True "
            f"({type(error).__name__}: {_one_line(error)})"
        ) from None
    missing = [part for part in PARTS if not isinstance(checkpoint, dict) or part not in checkpoint]
    if missing:
        raise EvaluationError(
            f"{path} is not a transformer_lab training checkpoint: it lacks {', '.join(missing)}"
        )
    return checkpoint


def load(path: Path) -> tuple[Seq2SeqLitModule, SyntheticDataModule, int | None]:
    """The run's module (with the checkpoint's weights), its datamodule, and the global step
    the checkpoint was saved at.

    Lightning passes a class only the saved settings its constructor takes and drops the
    rest; a setting this version does not know would change what is evaluated unseen, so
    it is an error here.
    """
    checkpoint = read_checkpoint(path)
    kwargs = {"map_location": "cpu", "weights_only": True}
    try:
        module = Seq2SeqLitModule.load_from_checkpoint(path, **kwargs)
        datamodule = SyntheticDataModule.load_from_checkpoint(path, **kwargs)
    except (TypeError, ValueError, RuntimeError) as error:
        raise EvaluationError(
            f"{path} does not fit this version of transformer_lab: {_one_line(error)}"
        ) from None
    built = {"hyper_parameters": module, "datamodule_hyper_parameters": datamodule}
    unknown = [f"{part}.{key}" for part, obj in built.items()
               for key in checkpoint[part] if key not in obj.hparams]  # fmt: skip
    if unknown:
        raise EvaluationError(
            f"{path} does not fit this version of transformer_lab: it has settings this "
            f"version does not take: {', '.join(unknown)}"
        )
    return module, datamodule, checkpoint.get("global_step")


def with_test_splits(
    run_data: SyntheticDataModule, test_splits: dict, model_max_len: int
) -> SyntheticDataModule:
    """The run's datamodule rebuilt with its test splits changed by ``test_splits``."""
    data = dict(run_data.hparams)
    if test_splits.get("test_long_max_len") and not test_splits.get(
        "test_long_size", data["test_long_size"]
    ):
        raise EvaluationError(
            "data.test_long_max_len needs a test_long split; this run had none, so give "
            "data.test_long_size too (allowed: >= 1)"
        )
    try:
        datamodule = SyntheticDataModule(**(data | test_splits))
    except ValueError as error:
        raise EvaluationError(f"data: {error}") from None
    missing = datamodule.missing_positions(model_max_len)
    if missing:
        raise EvaluationError(
            f"data.test_long_max_len={datamodule.test_long_max_len} needs more positions than "
            f"the model has (max_len={model_max_len}); allowed: data.test_long_max_len <= "
            f"{datamodule.test_long_max_len - missing}"
        )
    return datamodule


def decoded_metrics(
    trainer: L.Trainer, module: Seq2SeqLitModule, datamodule, beam_size: int, length_penalty
) -> dict[str, float]:
    """The test stage's metrics with ``seq_acc`` decoded by a ``beam_size`` beam (1: greedy)."""
    module.beam_size, module.length_penalty = beam_size, length_penalty
    trainer.test(module, datamodule=datamodule, verbose=False)
    return {k: float(trainer.callback_metrics[k])
            for k in sorted(trainer.callback_metrics, key=natural_key)}  # fmt: skip


def print_results(results: dict, module, datamodule, n_samples: int) -> None:
    beam = f"beam {results['beam_size']}"
    console = Console()
    table = Table(
        title=f"{results['checkpoint']}\nlength penalty {results['length_penalty']}",
        caption="seq_acc and seq_acc_by_len/<words> depend on the decoding; the rest does not",
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
        for row in zip(batch["src"], batch["tgt_out"], greedy[:, 1:], beamed[:, 1:], strict=True):
            samples.add_row(*(detokenize(tokens.tolist()) for tokens in row))
        console.print(samples)


def evaluate(cfg: DictConfig) -> dict:
    """Evaluate ``cfg.ckpt_path``, write ``eval.json`` and return what it holds."""
    if OmegaConf.is_missing(cfg, "ckpt_path"):
        raise EvaluationError(
            "ckpt_path is required: python -m transformer_lab.evaluate "
            "ckpt_path=<run>/checkpoints/last.ckpt (or ckpt_path=<run folder>)"
        )
    path = find_checkpoint(cfg.ckpt_path)
    module, datamodule, global_step = load(path)
    test_splits = {k: v for k, v in cfg.data.items() if v is not None}
    if test_splits:
        datamodule = with_test_splits(datamodule, test_splits, module.hparams.max_len)
    try:
        check_beam_search(module.model, cfg.beam_size, cfg.length_penalty)
    except ValueError as error:
        raise EvaluationError(str(error)) from None
    if cfg.batch_size is not None:
        datamodule.batch_size = cfg.batch_size
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
        "beam_size": cfg.beam_size,
        "length_penalty": cfg.length_penalty,
        "data": test_splits,  # the test splits changed from the run's
        "greedy": decoded_metrics(trainer, module, datamodule, 1, 0.0),
        "beam": decoded_metrics(trainer, module, datamodule, cfg.beam_size, cfg.length_penalty),
    }
    # evaluations of other test splits go beside eval.json, not over it
    name = "_".join(["eval", *(f"{k}={v}" for k, v in test_splits.items())]) + ".json"
    output = Path(cfg.output) if cfg.output else (run_folder_of(path) or path.parent) / name
    output.write_text(json.dumps(results, indent=2) + "\n")
    print_results(results, module, datamodule, cfg.samples)
    log.info("wrote %s", output)
    return results


def quote_paths(argv: list[str], keys: tuple[str, ...] = ("ckpt_path", "output")) -> list[str]:
    """Quote the path values of ``key=value`` arguments for Hydra's override parser.

    A sweep's run folders are named by their overrides (``model.norm=pre,seed=1``), and
    unquoted ``=`` and ``,`` in a value are override syntax; quoting makes them plain text.
    """
    quoted = []
    for arg in argv:
        key, sep, value = arg.partition("=")
        if sep and key in keys and value[:1] not in ("'", '"'):
            quote = '"' if "'" in value else "'"
            arg = f"{key}={quote}{value}{quote}"
        quoted.append(arg)
    return quoted


@hydra.main(version_base="1.3", config_path="pkg://transformer_lab.conf", config_name="evaluate")
def main(cfg: DictConfig) -> None:
    logging.getLogger(LIGHTNING_INFO).setLevel(logging.WARNING)
    quiet_library_notices()
    try:
        evaluate(cfg)
    except EvaluationError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)


def cli() -> None:
    """``tlab-eval`` and ``python -m transformer_lab.evaluate``: paths quoted, then Hydra."""
    sys.argv = quote_paths(sys.argv)
    main()


if __name__ == "__main__":
    cli()
