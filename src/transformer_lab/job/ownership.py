"""What belongs to a run: the checkpoint it may resume and the folder it may write into.

A checkpoint of another model or task (``ckpt_path=`` another experiment's ``last.ckpt``)
would train on in that run's folder and rewrite its records, or fail with a shape mismatch
after rewriting its config. So a resumed checkpoint's model settings and data settings
(what it saved, renamed to this version's names) must be this config's, but for how the
batches are loaded, where its files are and what the data learnt from them:
:func:`check_checkpoint`,
before anything is written.

A fresh run writes into a new or empty folder, or into the folder of an earlier start of
this same config (a requeued job, a sweep run again, a command with a fixed
``hydra.run.dir``), whose ``.hydra/config.yaml`` equals this config but for ``ckpt_path``
and ``paths``:
:func:`check_folder`, before Hydra writes there. ``hydra.run.dir=/`` or ``/etc`` is
refused, as is a folder of another config.
"""

from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from transformer_lab.config.renamed import current_data_settings, current_settings
from transformer_lab.config.validation import InvalidSetting
from transformer_lab.model.config import TransformerConfig
from transformer_lab.records import DamagedRecord, read_config
from transformer_lab.runs.layout import LOCK

# what a resume may change of the data: how its batches are loaded, and the record of the
# files it reads (data=pairs: a resume reads them as they are now, data/pairs.py)
LOADING = ("batch_size", "num_workers", "file_sha256")
# what a resume may change of the model: the seed of the weights it no longer starts from
STARTING = ("init_seed",)
# what a start leaves before it writes anything of a run: Hydra's .hydra/ and the job's log
# (any *.log), and the job's lock (run_lock.py)
START_TRACES = (".hydra", LOCK)
OWN_FOLDER = "a new or empty folder, or the folder of an earlier run of this same config"


def experiment(config) -> dict:
    """A config as given (unresolved) without ``ckpt_path`` and ``paths``: what makes two
    starts the same experiment (``ckpt_path=last`` finds the runs of this one). Where its
    files are is not part of it: a sweep kept and continued on another machine
    (:mod:`transformer_lab.sweep.keep`) or an outputs folder moved is the same experiment
    under another ``paths.outputs_root``."""
    tree = OmegaConf.to_container(config, resolve=False) if OmegaConf.is_config(config) else config
    tree = dict(tree)
    tree.pop("ckpt_path", None)
    tree.pop("paths", None)
    return tree


def _flat(tree, prefix: str = "") -> dict[str, object]:
    if isinstance(tree, dict):
        flat = {}
        for key, value in tree.items():
            flat |= _flat(value, f"{prefix}{key}.")
        return flat or {prefix.rstrip("."): {}}
    return {prefix.rstrip("."): tree}


def differences(theirs: dict, ours: dict) -> list[str]:
    """``key: theirs -> ours`` for each dotted key whose value differs (absent: ``-``)."""
    a, b = _flat(theirs), _flat(ours)
    return [
        f"{key}: {a.get(key, '-')!r} there, {b.get(key, '-')!r} here"
        for key in sorted(a.keys() | b.keys())
        if a.get(key, "-") != b.get(key, "-")
    ]


def _without(settings, keys) -> dict:
    return {key: value for key, value in dict(settings).items() if key not in keys}


def _said(found: list[str]) -> str:
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return f"{found[0]}{more}"


def check_checkpoint(
    checkpoint: dict, module, datamodule, setting: str, value: str, learned=()
) -> None:
    """The checkpoint (its contents) is of this config's model and data, or InvalidSetting
    naming ``setting=value`` and the first difference. ``module`` and ``datamodule``: this
    config's, built (on the meta device will do); ``learned``: the data settings learnt
    from files (a tokenizer), which a resume takes from the checkpoint."""
    saved_model = _as_built(current_settings(checkpoint["hyper_parameters"]).get("model", {}))
    saved_data = current_data_settings(checkpoint["datamodule_hyper_parameters"])
    data_own = (*LOADING, *learned, *getattr(type(datamodule), "file_settings", ()))
    saved_model, ours_model = (_without(t, STARTING) for t in (saved_model, module.hparams.model))
    saved_data, ours_data = (_without(t, data_own) for t in (saved_data, datamodule.hparams))
    found = [f"model.{d}" for d in differences(saved_model, ours_model)]
    found += [f"data.{d}" for d in differences(saved_data, ours_data)]
    if found:
        raise InvalidSetting(
            setting,
            value,
            f"a checkpoint of another model or task: {_said(found)}",
            "a checkpoint of a run of this model and data, or a start without it",
        )


def _as_built(model: dict) -> dict:
    """A saved model node as the network it rebuilds (an older checkpoint lacks the fields
    added since, which take their defaults, as that run trained: ``model.decoder.norm``,
    ``model.options``); as saved where it does not rebuild (the comparison then names it)."""
    try:
        return TransformerConfig.from_dict(model).to_dict()
    except (InvalidSetting, TypeError, ValueError):
        return model


def _only_start_traces(folder: Path) -> bool:
    """Whether ``folder`` holds nothing but what Hydra writes before a job starts (its
    ``.hydra/`` and the job's log): a start that failed before it wrote anything."""
    return all(p.name in START_TRACES or p.suffix == ".log" for p in folder.iterdir())


def check_folder(folder: Path, config: DictConfig, setting: str) -> None:
    """A fresh run of ``config`` (as given, without its ``hydra`` node) may write into
    ``folder``, or InvalidSetting naming ``setting`` (``hydra.run.dir``) and what is there."""
    folder = Path(folder)
    if not folder.exists():
        return
    if not folder.is_dir():
        raise InvalidSetting(setting, str(folder), "not a folder", OWN_FOLDER)
    if not any(folder.iterdir()):
        return
    saved = folder / ".hydra" / "config.yaml"
    theirs = None
    if saved.is_file():
        try:
            theirs = read_config(saved)
        except DamagedRecord:
            theirs = None  # a start cut short, by a full disk say: its own traces only?
    if theirs is None:
        if _only_start_traces(folder):
            return
        raise InvalidSetting(
            setting,
            str(folder),
            "it holds files that are not a run of the lab (no readable .hydra/config.yaml)",
            OWN_FOLDER,
        )
    found = differences(experiment(theirs), experiment(config))
    if found:
        raise InvalidSetting(
            setting,
            str(folder),
            f"the folder of a run of another config: {_said(found)}",
            OWN_FOLDER,
        )
