"""Settings renamed since runs were first written: one table, old key -> current key.

A checkpoint written before the config tree holds the module's settings as one flat dict
(``lr``, ``encoder_norm``, ``activation``: each ``model.<name>`` in its run's config); this
table says where each lives now, so that such a checkpoint still loads and evaluates
(:func:`current_settings`), and the command line names the new key when an old one is
typed (:mod:`.command_line`).
"""

OPTIMISATION = (
    "lr",
    "betas",
    "weight_decay",
    "schedule",
    "warmup_steps",
    "min_lr_ratio",
    "label_smoothing",
)
RENAMED_KEYS = {
    "model.activation": "model.ffn",
    "model.compile": "compile",
    **{f"model.{name}": f"optim.{name}" for name in OPTIMISATION},
    **{
        f"model.{stack}_{choice}": f"model.{stack}.{choice}"
        for stack in ("encoder", "decoder")
        for choice in ("norm", "pos_encoding")
    },
}


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
