"""The help of a typed config's settings, rendered from the config itself (fairseq's
``gen_parser_from_dataclass``): one line per setting with the value a run would take, the
field's one-line help, the class's own default where the run's differs, and for a setting
that names an option (its field's ``metadata["choices"]``: the axis) the registry's choices.
An option's own settings (an option class's ``Settings``, :mod:`transformer_lab.model.options`)
follow under ``options.<option>``, for every option that has any. Nothing here is written by
hand twice: a new field, option or setting shows up as soon as it exists.

``python -m transformer_lab.train --help model`` prints it (:func:`topic_help`).
"""

import dataclasses
from collections.abc import Mapping

from omegaconf import OmegaConf

from transformer_lab.config.registry import Registry

WIDTH = 34  # the column of the help text


def _text(value) -> str:
    """A value as a command line or a YAML file writes it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    return str(value)


def _line(key: str, value, help_text: str) -> str:
    setting = f"  {key} = {_text(value)}"
    return f"{setting:<{WIDTH}} {help_text}" if len(setting) < WIDTH else f"{setting}  {help_text}"


def setting_lines(
    cls: type, values: Mapping, registries: Mapping[str, Registry], prefix: str = ""
) -> list[str]:
    """One line per field of the dataclass ``cls`` (a nested dataclass's fields under its
    name), its value from ``values`` (the run's node; a field it lacks: the default)."""
    lines = []
    for f in dataclasses.fields(cls):
        default = f.default if f.default is not dataclasses.MISSING else None
        given = values.get(f.name, default) if isinstance(values, Mapping) else default
        if dataclasses.is_dataclass(f.type):
            lines += setting_lines(f.type, given or {}, registries, f"{prefix}{f.name}.")
            continue
        if f.name == "options" and registries:  # a section of its own: option_lines
            continue
        text = f.metadata.get("help", "")
        axis = f.metadata.get("choices")
        if axis in registries:
            text += f"; choices: {', '.join(registries[axis])}"
        if f.default is not dataclasses.MISSING and given != f.default:
            text += f" ({cls.__name__}'s own default: {_text(f.default)})"
        lines.append(_line(f"{prefix}{f.name}", given, text))
    return lines


def option_lines(options: Mapping, registries: Mapping[str, Registry], prefix: str) -> list[str]:
    """The settings of every option that has any (its class's ``Settings``), under
    ``options.<option>``, their values from ``options`` (the run's ``options`` node)."""
    lines = []
    for axis, registry in registries.items():
        for name, option in registry.items():
            settings = getattr(option, "Settings", None)
            if settings is None:
                continue
            lines.append(f"  {prefix}options.{name}: the settings of {axis}={name}")
            lines += setting_lines(
                settings, options.get(name) or {}, {}, f"{prefix}options.{name}."
            )
    return lines


def topic_help(topic: str, cls: type, node, registries: Mapping[str, Registry]) -> str:
    """The help of the config node ``topic`` (``model``), the dataclass ``cls``, with the
    values of the run's ``node`` (a DictConfig, resolved here)."""
    values = OmegaConf.to_container(node, resolve=True) if OmegaConf.is_config(node) else node
    doc = (cls.__doc__ or "").strip().splitlines()[0]
    lines = [
        f"{topic}: {doc} ({cls.__module__}.{cls.__name__})",
        f"each as {topic}.<setting>=<value>; the value this command line gives, then its help",
        *setting_lines(cls, values, registries, f"{topic}."),
    ]
    if registries:
        lines += option_lines(values.get("options") or {}, registries, f"{topic}.")
        groups = ", ".join(f"{topic}/{axis}=<choice>" for axis in registries)
        lines.append(f"an option is also its group: {groups}")
    return "\n".join(lines)
