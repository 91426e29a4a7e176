"""A flat keyword interface generated from a typed config (a dataclass), never kept by hand.

A field is one keyword, its name or the name its metadata gives (``"keyword"``: the FFN the
network's keyword API calls ``activation``); a field that is itself a dataclass (a stack's
own choices) gives one keyword per field of its own, ``<field>_<its field>``
(``encoder_norm``). :class:`Keywords` reads the dataclass's fields and derives from them the
keywords in order with their defaults, the instance a call's positional arguments and
keywords make, the flat keywords of an instance, the ``inspect.Signature`` that ``help`` and
editors show, and the keyword an error of a nested field is named by.
"""

import dataclasses
import inspect
from dataclasses import MISSING

from transformer_lab.config.validation import InvalidSetting

REQUIRED = MISSING  # the default of a keyword the call must give


class Keywords:
    """The keyword interface of the dataclass ``cls``."""

    def __init__(self, cls: type):
        self.cls = cls
        self.paths: dict[str, tuple[str, ...]] = {}  # keyword -> its field's path
        self.defaults: dict[str, object] = {}  # keyword -> default, or REQUIRED
        for f in dataclasses.fields(cls):
            if dataclasses.is_dataclass(f.type):
                for inner in dataclasses.fields(f.type):
                    keyword = f"{f.name}_{_keyword(inner)}"
                    self.paths[keyword] = (f.name, inner.name)
                    self.defaults[keyword] = _default(inner)
            else:
                self.paths[_keyword(f)] = (f.name,)
                self.defaults[_keyword(f)] = _default(f)

    @property
    def names(self) -> list[str]:
        """The keywords in order: what positional arguments fill."""
        return list(self.paths)

    def build(self, *arguments, **keywords):
        """The instance of ``cls`` that ``arguments`` (in :attr:`names` order) and
        ``keywords`` give; TypeError where Python would raise one (too many arguments, an
        unknown keyword, one given twice), InvalidSetting of a value named by its keyword."""
        names = self.names
        if len(arguments) > len(names):
            raise TypeError(f"{self.cls.__name__} takes at most {len(names)} positional arguments")
        for name, value in zip(names, arguments, strict=False):
            if name in keywords:
                raise TypeError(f"{self.cls.__name__} got multiple values for argument '{name}'")
            keywords[name] = value
        nested: dict[str, dict] = {}
        for name, value in keywords.items():
            if name not in self.paths:
                raise TypeError(f"{self.cls.__name__} got an unexpected keyword argument '{name}'")
            *parent, leaf = self.paths[name]
            node = nested.setdefault(parent[0], {}) if parent else nested
            node[leaf] = value
        types = {f.name: f.type for f in dataclasses.fields(self.cls)}
        try:
            for name, value in nested.items():
                if isinstance(value, dict) and dataclasses.is_dataclass(types[name]):
                    nested[name] = types[name](**value)
            return self.cls(**nested)
        except InvalidSetting as error:  # named by the keyword the caller typed
            raise InvalidSetting(
                self.keyword_of(error.key), error.value, error.reason, error.allowed
            ) from None

    def of(self, instance) -> dict:
        """The flat keywords of ``instance``, primitives all: what :meth:`build` takes back."""
        flat, values = {}, dataclasses.asdict(instance)
        for keyword, path in self.paths.items():
            value = values
            for name in path:
                value = value[name]
            flat[keyword] = value
        return flat

    def keyword_of(self, key: str) -> str:
        """The keyword of a dotted field ``key`` (``encoder.norm`` -> ``encoder_norm``),
        with what lies below it (``options.t5_bias.num_buckets`` stays as it is)."""
        parts = tuple(key.split("."))
        for keyword, path in self.paths.items():
            if parts[: len(path)] == path:
                return ".".join((keyword, *parts[len(path) :]))
        return key

    def signature(self, *extra: inspect.Parameter) -> inspect.Signature:
        """The keywords in order with their defaults (a required one without), then
        ``extra`` parameters."""
        kind, empty = inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.empty
        parameters = [
            inspect.Parameter(name, kind, default=empty if default is REQUIRED else default)
            for name, default in self.defaults.items()
        ]
        return inspect.Signature([*parameters, *extra])


def _keyword(f: dataclasses.Field) -> str:
    return f.metadata.get("keyword", f.name)


def _default(f: dataclasses.Field):
    if f.default is not MISSING:
        return f.default
    return f.default_factory() if f.default_factory is not MISSING else REQUIRED
