"""The project's own validation of settings: the exception its checks raise, and the checks
of a value's type and range that the constructors share.

A :class:`ConfigError` is a user's mistake: the command line reports it in one line with
exit status 2 and no traceback. Any other exception a constructor raises is a bug and keeps
its traceback, so a constructor refuses a bad argument with :class:`InvalidSetting`, never
with a bare ValueError or a TypeError from deeper down.
"""


class ConfigError(ValueError):
    """A configuration value that cannot work; raised before any training starts."""


class InvalidSetting(ConfigError):
    """One setting refused by the constructor or check that takes it.

    Worded ``<key>=<value>: <reason>; allowed: <allowed>``. A constructor knows its own
    argument names only; :meth:`within` names the setting by its config key
    (``d_model`` -> ``model.d_model``).
    """

    def __init__(self, key: str, value, reason: str, allowed: str):
        super().__init__(f"{key}={value!r}: {reason}; allowed: {allowed}")
        self.key, self.value, self.reason, self.allowed = key, value, reason, allowed

    def within(self, group: str) -> "InvalidSetting":
        return InvalidSetting(f"{group}.{self.key}", self.value, self.reason, self.allowed)

    def __reduce__(self):  # rebuilt from its parts, e.g. sent back by a sweep's worker
        return InvalidSetting, (self.key, self.value, self.reason, self.allowed)


def one_line(error: Exception, limit: int = 400) -> str:
    """An exception's message on one line, cut at ``limit`` characters: a library's
    multi-paragraph text, as a refusal's one line quotes it."""
    text = " ".join(str(error).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_integer(key: str, value, minimum: int, maximum: int | None = None) -> None:
    """``value`` is an int (not a bool, not a float) in ``minimum..maximum``."""
    if maximum is None:
        allowed = f"an integer >= {minimum}"
    else:
        allowed = f"an integer in [{minimum}, {maximum}]"
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidSetting(key, value, "not an integer", allowed)
    if value < minimum or (maximum is not None and value > maximum):
        raise InvalidSetting(key, value, "out of range", allowed)


def check_number(
    key: str,
    value,
    *,
    minimum: float | None = None,
    above: float | None = None,
    maximum: float | None = None,
    below: float | None = None,
) -> None:
    """``value`` is an int or a float within the bounds given: ``minimum``/``maximum``
    inclusive, ``above``/``below`` exclusive. NaN is out of every range."""
    lower = ("[", ">=", minimum) if minimum is not None else ("(", ">", above)
    upper = ("]", "<=", maximum) if maximum is not None else (")", "<", below)
    if lower[2] is not None and upper[2] is not None:
        allowed = f"a number in {lower[0]}{lower[2]}, {upper[2]}{upper[0]}"
    elif lower[2] is not None or upper[2] is not None:
        _, sign, bound = lower if lower[2] is not None else upper
        allowed = f"a number {sign} {bound}"
    else:
        allowed = "a number"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidSetting(key, value, "not a number", allowed)
    inside = (
        (minimum is None or value >= minimum)
        and (above is None or value > above)
        and (maximum is None or value <= maximum)
        and (below is None or value < below)
        and value == value  # NaN
    )
    if not inside:
        raise InvalidSetting(key, value, "out of range", allowed)


def check_choice(key: str, value, choices) -> None:
    """``value`` is one of ``choices`` (names)."""
    if not isinstance(value, str) or value not in choices:
        raise InvalidSetting(key, value, "unknown", ", ".join(choices))


def check_flag(key: str, value) -> None:
    """``value`` is True or False (a string such as 'no' would count as True)."""
    if not isinstance(value, bool):
        raise InvalidSetting(key, value, "not a boolean", "true or false")
