"""Evaluate a checkpoint on its test split(s), greedy and beam search::

    python -m transformer_lab.evaluate ckpt_path=<run>/checkpoints/last.ckpt [beam_size=8 ...]

``ckpt_path`` may also be a run folder: its ``checkpoints/last.ckpt`` is taken, or with
``test_weights=best`` its ``checkpoints/best.ckpt`` (the best ``val/seq_acc``). The
checkpoint alone rebuilds the model and the data: the LightningModule and the datamodule
both saved their constructor arguments into it, so neither the original config nor the
run folder is needed. Every test split (``test``, and ``test_long`` where the run had one)
is decoded greedily and with beam search, through the very test stage training ends with,
so the greedy numbers equal the run's own ``metrics.json``. ``data.*`` changes the test
splits (``data.test_long_max_len=30``: lengths further past training than the run
tested). Prints a metrics table titled with the checkpoint's step (and a note when the
checkpoint is older than the end of its run, as ``best.ckpt`` may be) and sample
generations, and writes ``eval.json`` (by default into the run folder).

The settings are ``conf/evaluate.yaml``, composed by Hydra, but without ``@hydra.main``:
an evaluation has no run folder of its own, and its two paths are taken as typed (see
:func:`configure`).
"""

import json
import logging
import sys
from importlib.resources import files
from pathlib import Path

import lightning as L
from hydra import compose, initialize_config_module
from hydra.errors import OverrideParseException
from omegaconf import DictConfig, OmegaConf
from rich.console import Console
from rich.table import Table

from transformer_lab.config.command_line import nearest_first
from transformer_lab.config.validation import InvalidSetting, one_line
from transformer_lab.console import LIGHTNING_INFO, quiet_library_notices
from transformer_lab.data import DATAMODULES, SplitsDataModule, SyntheticDataModule
from transformer_lab.model.decoding import beam_search, check_beam_search
from transformer_lab.runs.layout import (
    TEST_WEIGHTS,
    recorded_metrics,
    run_folder_of,
    tested_checkpoint,
)
from transformer_lab.runs.order import natural_key
from transformer_lab.training import checkpoint_io, text_metrics
from transformer_lab.training.checkpoint_io import UnusableCheckpoint
from transformer_lab.training.module import Seq2SeqLitModule

log = logging.getLogger(__name__)
PATHS = (
    "ckpt_path",
    "output",
    "data.test_path",
    "data.train_path",
    "data.val_path",
)  # settings that are paths, taken as typed


class EvaluationError(ValueError):
    """What was asked cannot be evaluated: a missing or foreign checkpoint, a bad setting."""


def find_checkpoint(path: str | Path, test_weights: str = "last") -> Path:
    """``path`` if it is a file, or the run folder ``path``'s ``checkpoints/last.ckpt`` or
    ``best.ckpt`` by ``test_weights``."""
    if test_weights not in TEST_WEIGHTS:
        raise EvaluationError(
            f"test_weights={test_weights!r}: unknown; allowed: {', '.join(TEST_WEIGHTS)}"
        )
    path = Path(path)
    if path.is_dir():
        path = tested_checkpoint(path, test_weights)
    if not path.is_file():
        raise EvaluationError(
            f"ckpt_path: {path} does not exist; give a checkpoint file or a run folder "
            f"that holds checkpoints/{test_weights}.ckpt"
        )
    return path


def read_checkpoint(path: Path) -> dict:
    """The checkpoint's contents, or an EvaluationError naming the file and why it is none."""
    try:
        return checkpoint_io.read_checkpoint(path)
    except UnusableCheckpoint as error:
        raise EvaluationError(f"{path} is {error}") from error


def datamodule_class(checkpoint: dict) -> type[SplitsDataModule]:
    """The datamodule class the checkpoint's run used: the one whose saved state it holds
    (:meth:`.SplitsDataModule.state_dict`), or the synthetic tasks' (a checkpoint written
    before the project had other data saved none)."""
    for name, cls in DATAMODULES.items():
        if name in checkpoint:
            return cls
    return SyntheticDataModule


def load(path: Path) -> tuple[Seq2SeqLitModule, SplitsDataModule, int | None]:
    """The run's module (with the checkpoint's weights), its datamodule, and the global step
    the checkpoint was saved at.

    Lightning passes a class only the saved settings its constructor takes and drops the
    rest; a setting this version does not know would change what is evaluated unseen, so
    it is an error here. A setting added since the checkpoint was written takes the value
    that builds what it was trained as, a renamed one its current name
    (``Seq2SeqLitModule.current_settings``). A datamodule that reads files (``data=pairs``)
    reads them when its splits are first needed, not here: generating from a checkpoint
    needs none of them.
    """
    checkpoint = read_checkpoint(path)
    kwargs = {"map_location": "cpu", "weights_only": True}
    saved = Seq2SeqLitModule.current_settings(checkpoint["hyper_parameters"])
    checkpoint["hyper_parameters"] = saved
    try:
        module = Seq2SeqLitModule.load_from_checkpoint(path, **kwargs, **saved)
        datamodule = datamodule_class(checkpoint).load_from_checkpoint(path, **kwargs)
    except InvalidSetting as error:
        raise EvaluationError(str(error.within("data"))) from None
    except (TypeError, ValueError, RuntimeError) as error:
        raise EvaluationError(
            f"{path} does not fit this version of transformer_lab: {one_line(error)}"
        ) from None
    built = {"hyper_parameters": module, "datamodule_hyper_parameters": datamodule}
    unknown = [
        f"{part}.{key}"
        for part, obj in built.items()
        for key in checkpoint[part]
        if key not in obj.hparams
    ]
    if unknown:
        raise EvaluationError(
            f"{path} does not fit this version of transformer_lab: it has settings this "
            f"version does not take: {', '.join(unknown)}"
        )
    return module, datamodule, checkpoint.get("global_step")


def with_test_splits(
    run_data: SplitsDataModule, test_splits: dict, model_max_len: int
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
    if test_splits.get("test_long_max_len") and not test_splits.get(
        "test_long_size", data["test_long_size"]
    ):
        raise EvaluationError(
            "data.test_long_max_len needs a test_long split; this run had none, so give "
            "data.test_long_size too (allowed: >= 1)"
        )
    try:
        datamodule = cls(**run_data.changed_settings(test_splits))
        missing = datamodule.missing_positions(model_max_len)
    except InvalidSetting as error:
        raise EvaluationError(str(error.within("data"))) from None
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
        datamodule = with_test_splits(datamodule, test_splits, module.hparams.max_len)
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
        results["sacrebleu"] = text_metrics.signatures()
    # evaluations of other test splits go beside eval.json, not over it (a file by its name)
    # (the run's own files given where they moved to, file_settings, evaluate the same)
    changed = {
        k: Path(v).name if k.endswith("_path") else v
        for k, v in test_splits.items()
        if k not in datamodule.file_settings
    }
    name = "_".join(["eval", *(f"{k}={v}" for k, v in changed.items())]) + ".json"
    output = Path(cfg.output) if cfg.output else (run_folder_of(path) or path.parent) / name
    output.write_text(json.dumps(results, indent=2) + "\n")
    print_results(results, module, datamodule, cfg.samples)
    note = earlier_than_its_run(path, global_step)
    if note:
        log.warning(note)
    log.info("wrote %s", output)
    return results


def configure(argv: list[str], config: str = "evaluate", path_settings=PATHS) -> DictConfig:
    """``conf/<config>.yaml`` with the command line's ``<setting>=<value>`` arguments.

    The settings ``path_settings`` (``ckpt_path``, ``output``, ...) are paths, set as typed: a
    sweep's run folders are named by their overrides (``model.norm=pre,seed=1``), whose ``=``
    and ``,`` Hydra's override parser would read as syntax. The other values go through that
    parser (``null``, numbers, quoting). Only the file's settings can be set: Hydra would add
    an unknown key (``+key``) that nothing reads, so a misspelt setting would be ignored.
    ``tlab-generate`` reads its settings the same way (``config="generate"``).
    """
    with initialize_config_module("transformer_lab.conf", version_base="1.3"):
        names = setting_names(OmegaConf.to_container(compose(config)))
        paths, overrides = {}, []
        for arg in argv:
            name, sep, value = arg.partition("=")
            if name not in names:
                nearest = ", ".join(nearest_first(name, names))
                raise EvaluationError(f"{name} is not a setting; allowed: {nearest}")
            if not sep:
                raise EvaluationError(f"{name} needs a value: {name}=<value>")
            if name in path_settings:
                paths[name] = value
            else:
                overrides.append(arg)
        try:
            cfg = compose(config, overrides=overrides)
        except OverrideParseException as error:
            raise EvaluationError(f"{error.override}: {one_line(error)}") from None
    for name, value in paths.items():
        OmegaConf.update(cfg, name, value)
    return cfg


def setting_names(config: dict, prefix: str = "") -> list[str]:
    """Every setting of ``config``, dotted: ``beam_size``, ``data.test_size``, ..."""
    return [
        name
        for key, value in config.items()
        for name in (
            setting_names(value, f"{prefix}{key}.")
            if isinstance(value, dict)
            else [f"{prefix}{key}"]
        )
    ]


def usage() -> str:
    """The usage line and the settings, as ``conf/evaluate.yaml`` documents them."""
    settings = files("transformer_lab.conf").joinpath("evaluate.yaml").read_text()
    return (
        "usage: python -m transformer_lab.evaluate (or tlab-eval) "
        "ckpt_path=<checkpoint or run folder> [<setting>=<value> ...]\n\n"
        f"settings (conf/evaluate.yaml):\n\n{settings}"
    )


def cli(argv: list[str] | None = None) -> None:
    """``tlab-eval`` and ``python -m transformer_lab.evaluate``: what cannot be evaluated is
    one ``error:`` line and exit status 2."""
    argv = sys.argv[1:] if argv is None else argv
    if {"-h", "--help"} & set(argv):
        print(usage(), end="")
        return
    try:
        cfg = configure(argv)
        # the terminal: log lines on stdout ("wrote eval.json"), no notices nobody can act on
        logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)
        logging.getLogger(LIGHTNING_INFO).setLevel(logging.WARNING)
        quiet_library_notices()
        evaluate(cfg)
    except EvaluationError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    cli()
