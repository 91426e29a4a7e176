"""What a docs block claims, checked against what its command prints now.

The words must be the same; a number written with a decimal point may move by the block's
tolerance (a seed's trajectory differs between CPUs and thread counts), any other number
(a count, a step, a seed) must be the same. :func:`differences` lists what differs, for the
assertion's message. A block that shows a template (``<n>``, ``<time>``, ``(...)``) is
matched as one (:func:`matches_template`).
"""

import re
from collections.abc import Callable

NUMBER = re.compile(r"(?<![\w.])[-+−]?\d+(?:\.\d+)?(?:e[-+]\d+)?(?![\w])")
Tolerance = Callable[[float], float]  # the doc's number -> how far the new one may be


def exact(_: float) -> float:
    return 0.0


def _parts(line: str) -> tuple[list[str], list[str]]:
    """The words between the numbers of ``line`` and the numbers, as written."""
    return NUMBER.split(line), NUMBER.findall(line)


def _value(number: str) -> float:
    return float(number.replace("−", "-"))


def differences(shown: str, printed: str, tolerance: Tolerance = exact) -> list[str]:
    """How ``printed`` (now) differs from ``shown`` (the doc), line by line; empty: it
    says the same. A number with a decimal point may differ by ``tolerance(shown value)``."""
    shown_lines, printed_lines = shown.strip("\n").split("\n"), printed.strip("\n").split("\n")
    if len(shown_lines) != len(printed_lines):
        return [f"{len(shown_lines)} lines shown, {len(printed_lines)} printed:\n{printed}"]
    found = []
    for doc_line, new_line in zip(shown_lines, printed_lines, strict=True):
        (doc_words, doc_numbers), (new_words, new_numbers) = _parts(doc_line), _parts(new_line)
        if [w.rstrip() for w in doc_words] != [w.rstrip() for w in new_words]:
            found.append(f"words differ:\n  shown:   {doc_line}\n  printed: {new_line}")
            continue
        for doc_number, new_number in zip(doc_numbers, new_numbers, strict=True):
            allowed = tolerance(_value(doc_number)) if "." in doc_number else 0.0
            if abs(_value(doc_number) - _value(new_number)) > allowed:
                found.append(
                    f"{doc_number} shown, {new_number} printed (within {allowed:g} allowed):\n"
                    f"  shown:   {doc_line}\n  printed: {new_line}"
                )
    return found


def template(line: str) -> re.Pattern:
    """A doc's template line as a pattern: ``<...>`` any text (a path that ends in one,
    ``/abs/outputs/runs/<time>``, any path), ``(...)`` any parenthesis, ``...`` any text, a
    number any number (the doc's are its example's: the main job's 1500 steps), the rest
    as written."""
    pattern = ""
    line = re.sub(r"/\S*?<[^<>]+>", "<path>", line)  # /abs/outputs/runs/<time>: any path
    for piece in re.split(r"(<[^<>]+>|\(\.\.\.\)|\.\.\.)", line):
        if piece.startswith("<") and piece.endswith(">"):
            pattern += r".+?"
        elif piece == "(...)":
            pattern += r"\(.+\)"
        elif piece == "...":
            pattern += r".*?"
        else:
            words = NUMBER.split(piece)
            pattern += r"[-+]?[\d.]+".join(re.escape(word) for word in words)
    return re.compile(pattern + "$")


def matches_template(shown: str, printed: str) -> bool:
    """Whether ``printed`` has the form of the template line ``shown``."""
    return bool(template(shown).match(printed))


def template_line(block: str) -> str:
    """The line a template block shows: its last (a first ``$`` line is the command)."""
    return block.strip("\n").split("\n")[-1]
