"""The output blocks of README.md and docs/ that a command produced: found by a marker, read,
and written back by the regeneration (``python -m tests.docs.regenerate``).

A block is the fenced code block right after an HTML comment ``<!-- example: <name> -->``
(invisible on GitHub), and, for one that shows numbers, the line right after its fence
that says where they came from (:data:`PROVENANCE`): the machine, the thread count, the
torch version and the tolerance the tests hold them to.
"""

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MARKER = "<!-- example: {} -->"
PROVENANCE = "<sub>Shown: "  # how the provenance line starts
FENCE = re.compile(r"^(```+)")


@dataclass(frozen=True)
class Block:
    """The block ``name`` of ``doc`` (relative to the repository): its lines, and where
    they are in the file's lines (``start``: its first; ``end``: the line after its last,
    a code block's closing fence); ``fenced``: a code block, not a table; ``provenance``:
    its provenance line (after one empty line) or None."""

    doc: str
    name: str
    text: str
    start: int
    end: int
    fenced: bool
    provenance: str | None


def find(doc: str, name: str) -> Block:
    """The block marked ``name`` in ``doc``: a fenced code block, or a Markdown table (its
    ``|`` lines); AssertionError if there is none."""
    lines = (ROOT / doc).read_text().split("\n")
    marker = MARKER.format(name)
    assert lines.count(marker) == 1, f"{doc}: {lines.count(marker)} markers {marker}"
    opening = lines.index(marker) + 1
    fence = FENCE.match(lines[opening])
    if fence:  # the lines between the fences
        start = opening + 1
        end = next(i for i in range(start, len(lines)) if lines[i] == fence[1])
    else:  # a table's lines
        assert lines[opening].startswith("|"), f"{doc}: no code block or table after {marker}"
        start = opening
        end = next(i for i in range(start, len(lines)) if not lines[i].startswith("|"))
    after = end + 1 if fence else end
    following = lines[after + 1] if after + 1 < len(lines) and not lines[after] else ""
    provenance = following if following.startswith(PROVENANCE) else None
    return Block(doc, name, "\n".join(lines[start:end]), start, end, bool(fence), provenance)


def rewrite(block: Block, text: str, provenance: str | None) -> None:
    """``block``'s lines replaced by ``text``, and its provenance line by ``provenance``
    (added, after an empty line, where it had none; None: left as it is)."""
    path = ROOT / block.doc
    lines = path.read_text().split("\n")
    closing = lines[block.end : block.end + 1] if block.fenced else []
    after = lines[block.end + len(closing) :]
    if provenance is not None and block.provenance:
        after = ["", provenance, *after[2:]]
    elif provenance is not None:
        after = ["", provenance, *after]
    path.write_text("\n".join([*lines[: block.start], *text.split("\n"), *closing, *after]))
