"""Settings renamed since runs were first written: one table, old key -> current key.

- The config tree: a checkpoint written before it holds the module's settings as one flat
  dict (``lr``, ``encoder_norm``, ``activation``: each ``model.<name>`` in its run's config);
  now the network is ``model`` (a stack's own choices under ``model.encoder``/``decoder``),
  the optimisation ``optim``, and ``compile`` a run setting.
- The data's lengths: a task's length (words, digits or key-value pairs, in the task's own
  unit) is ``data.*_task_len``; ``model.max_len`` alone counts positions.

A checkpoint that saved old names loads through the table (:func:`current_settings`,
:func:`current_data_settings`), and an old key typed on a command line is refused with its
new name (:func:`renamed_key`, :func:`renamed_reason`), and so is one a config file still
sets (:func:`check_current_keys`).
"""

from transformer_lab.config.validation import InvalidSetting

OPTIMISATION = (
    "lr",
    "betas",
    "weight_decay",
    "schedule",
    "warmup_steps",
    "min_lr_ratio",
    "label_smoothing",
)
# a datamodule's saved settings: old name -> current name
RENAMED_DATA_SETTINGS = {
    "min_len": "min_task_len",
    "max_len": "max_task_len",
    "test_long_max_len": "test_long_max_task_len",
    "model_max_len": "model_positions",  # data=pairs: the job passes model.max_len on
}
RENAMED_KEYS = {
    "model.activation": "model.ffn",
    "model.compile": "compile",
    **{f"model.{name}": f"optim.{name}" for name in OPTIMISATION},
    **{
        f"model.{stack}_{choice}": f"model.{stack}.{choice}"
        for stack in ("encoder", "decoder")
        for choice in ("norm", "pos_encoding")
    },
    **{
        f"data.{old}": "model.max_len" if new == "model_positions" else f"data.{new}"
        for old, new in RENAMED_DATA_SETTINGS.items()
    },
}
WHY = {"data": "a task's length is data.*_task_len; model.max_len counts positions"}


def renamed_key(key: str) -> str | None:
    """The dotted key to give instead of ``key``, None if it was not renamed."""
    return RENAMED_KEYS.get(key)


def renamed_reason(old: str, new: str) -> str:
    """Why the old key ``old`` is refused, for the error line."""
    why = WHY.get(old.split(".")[0])
    return f"now {new}" + (f" ({why})" if why else "")


def check_current_keys(config) -> None:
    """InvalidSetting for the first old key ``config`` (a run's composed config) still
    sets: an experiment file, or a run's saved ``config.yaml``, of an older version."""
    for old, new in RENAMED_KEYS.items():
        parent, _, leaf = old.rpartition(".")
        node = config.get(parent)
        if hasattr(node, "keys") and leaf in node:
            raise InvalidSetting(old, node[leaf], renamed_reason(old, new), new)


def current_settings(saved: dict) -> dict:
    """A checkpoint's saved module settings in this version's tree (``model``, ``optim``,
    ``compile``): a flat dict of an older version is moved key by key through
    :data:`RENAMED_KEYS`; a tree is returned as it is."""
    if isinstance(saved.get("model"), dict):
        return saved
    tree: dict = {"model": {}, "optim": {}}
    for name, value in saved.items():
        *parents, leaf = RENAMED_KEYS.get(f"model.{name}", f"model.{name}").split(".")
        node = tree
        for parent in parents:
            node = node.setdefault(parent, {})
        node[leaf] = value
    return tree


def current_data_settings(saved: dict) -> dict:
    """A checkpoint's saved data settings under this version's names."""
    return {RENAMED_DATA_SETTINGS.get(key, key): value for key, value in saved.items()}
