"""One option axis as a table of names -> classes, the one list of its allowed names.

Code, configs and tests enumerate a registry instead of repeating its names, so adding
an option is one class registered under its name (and its YAML in conf/): every loop over
the axis, every error message and every test parametrized by it picks the option up.
"""

from transformer_lab.config.validation import check_choice


class Registry(dict):
    """``name -> class`` for the setting ``setting`` (``norm``, ``pos_encoding``, ...)."""

    def __init__(self, setting: str):
        super().__init__()
        self.setting = setting

    def register(self, name: str):
        """A class decorator that enters the class under ``name``."""

        def enter(cls: type) -> type:
            self[name] = cls
            return cls

        return enter

    def lookup(self, name: str, setting: str | None = None) -> type:
        """The class of ``name``, or InvalidSetting naming ``setting`` (default: the
        registry's own, e.g. ``encoder_norm`` where a stack names its own choice) and the
        allowed names."""
        check_choice(setting or self.setting, name, self)
        return self[name]

    def name_of(self, instance) -> str:
        """The name ``instance``'s class is registered under (its exact class)."""
        return next(name for name, cls in self.items() if type(instance) is cls)
