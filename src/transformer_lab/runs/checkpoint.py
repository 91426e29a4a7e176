"""A run's checkpoint for the commands that read one (evaluate, generate): found in its run
folder, and rebuilt into the run's module and datamodule from the checkpoint alone."""

from pathlib import Path

from transformer_lab.config.entry_command import EvaluationError
from transformer_lab.config.renamed import current_data_settings, current_settings
from transformer_lab.config.validation import InvalidSetting, one_line
from transformer_lab.data import DATAMODULES, SplitsDataModule, SyntheticDataModule
from transformer_lab.runs.layout import TEST_WEIGHTS, tested_checkpoint
from transformer_lab.training import checkpoint_io
from transformer_lab.training.checkpoint_io import UnusableCheckpoint
from transformer_lab.training.module import Seq2SeqLitModule


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

    A setting this version does not know would change what is evaluated unseen, so it is
    an error here: the module's typed configs refuse one, and so does each datamodule. A
    setting added since the checkpoint was written takes its default, the value that builds
    what it was trained as; a renamed one its current name (one table,
    :mod:`transformer_lab.config.renamed`). A datamodule that reads files (``data=pairs``)
    reads them when its splits are first needed, not here: generating from a checkpoint
    needs none of them.
    """
    checkpoint = read_checkpoint(path)
    kwargs = {"map_location": "cpu", "weights_only": True}
    saved = current_settings(checkpoint["hyper_parameters"])
    checkpoint["hyper_parameters"] = saved
    data = current_data_settings(checkpoint["datamodule_hyper_parameters"])
    checkpoint["datamodule_hyper_parameters"] = data
    try:
        module = Seq2SeqLitModule.load_from_checkpoint(path, **kwargs, **saved)
        # built from the settings alone (its saved state only names its class): Lightning's
        # load_from_checkpoint would pass the saved old names on to the split settings
        datamodule = datamodule_class(checkpoint)(**data)
    except InvalidSetting as error:
        if error.key.split(".")[0] in saved:  # the module's, named model.<key> or optim.<key>
            raise EvaluationError(
                f"{path} does not fit this version of transformer_lab: {error}"
            ) from None
        raise EvaluationError(str(error.within("data"))) from None
    except (TypeError, ValueError, RuntimeError) as error:
        raise EvaluationError(
            f"{path} does not fit this version of transformer_lab: {one_line(error)}"
        ) from None
    unknown = [
        f"datamodule_hyper_parameters.{key}"
        for key in checkpoint["datamodule_hyper_parameters"]
        if key not in datamodule.hparams
    ]
    if unknown:
        raise EvaluationError(
            f"{path} does not fit this version of transformer_lab: it has settings this "
            f"version does not take: {', '.join(unknown)}"
        )
    return module, datamodule, checkpoint.get("global_step")
