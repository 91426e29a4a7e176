"""A typed config (a dataclass) from a dict of settings, refusing what Python would refuse
with a TypeError: a key that is no field (``+model.qk=1``) or a required field left out
(``~optim.lr``), each as one :class:`InvalidSetting` naming the setting and what is allowed.
The dataclass's own ``__post_init__`` checks the values."""

import dataclasses

from transformer_lab.config.validation import InvalidSetting


def from_settings(cls: type, settings: dict):
    """``cls(**settings)``, or InvalidSetting for the first unknown or missing key."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for name, value in settings.items():
        if name not in fields:
            reason = f"{cls.__name__} takes no such setting"
            raise InvalidSetting(name, value, reason, ", ".join(fields))
    for name, f in fields.items():
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if required and name not in settings:
            reason = f"missing ({cls.__name__} has no default for it)"
            raise InvalidSetting(name, None, reason, "a value in the config")
    return cls(**settings)


def check_complete(cls: type, settings: dict) -> None:
    """InvalidSetting for the first field of ``cls`` that ``settings`` leaves out, default
    or not: a run's config is the one place the lab's values are written, so a key deleted
    from it (``~model.dropout``) is an error, not the class's own default."""
    for f in dataclasses.fields(cls):
        if f.name not in settings:
            reason = "missing (every run sets it; the class's own default is not the lab's)"
            raise InvalidSetting(f.name, None, reason, "a value in the config")
