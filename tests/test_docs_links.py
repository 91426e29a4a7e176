"""Every link from README.md and docs/*.md to a file of the repository, or to a heading of
one, leads somewhere: the README was cut and its text moved to docs/ by topic, and a link
to a section that moved, was renamed or never existed fails here instead of on GitHub.
Anchors are GitHub's: the heading's text, lower-cased, punctuation dropped, spaces as
hyphens, a repeated heading numbered -1, -2, ..."""

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+).*?\1")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # http:, https:, mailto:, ...


def outside_fences(text: str) -> list[str]:
    """Each line of ``text``, blank inside fenced code blocks (and on their fences)."""
    lines, in_fence = [], False
    for line in text.splitlines():
        fence = FENCE.match(line)
        in_fence = in_fence != bool(fence)
        lines.append("" if in_fence or fence else line)
    return lines


def prose_lines(text: str) -> list[str]:
    """Each line of ``text`` as prose: code blocks and inline code spans blanked out."""
    return [CODE_SPAN.sub("", line) for line in outside_fences(text)]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: links and code marks reduced to their text, lower case,
    every character but letters, digits, ``_``, ``-`` and spaces dropped, spaces as ``-``."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives the headings of ``page``, repeats numbered as GitHub does."""
    seen: dict[str, int] = {}
    found = set()
    for line in outside_fences(page.read_text()):
        match = HEADING.match(line)
        if match:
            base = slug(match.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(page: Path) -> list[str]:
    """``page``'s local links whose file or heading does not exist, as ``line: target``."""
    broken = []
    for number, line in enumerate(prose_lines(page.read_text()), start=1):
        for target in LINK.findall(line):
            if EXTERNAL.match(target):
                continue
            path, _, anchor = target.partition("#")
            goal = (page.parent / path).resolve() if path else page
            if not goal.exists():
                broken.append(f"{number}: {target} (no such file)")
            elif anchor and goal.suffix == ".md" and anchor not in anchors(goal):
                broken.append(f"{number}: {target} (no such heading in {goal.name})")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(REPO).as_posix())
def test_every_local_link_leads_to_a_file_and_heading_that_exist(page):
    assert broken_links(page) == []


def test_the_readme_links_to_every_page_of_docs():
    """A page of docs/ that the README does not name is one a newcomer never finds."""
    readme = "\n".join(prose_lines((REPO / "README.md").read_text()))
    linked = {Path(target.partition("#")[0]).name for target in LINK.findall(readme)}
    assert {page.name for page in PAGES[1:]} <= linked


def test_anchors_are_githubs():
    """Slugs of headings as GitHub renders them (checked against the anchors its pages use)."""
    assert slug("Norm placement × positional encoding") == "norm-placement--positional-encoding"
    assert slug("The first round's `norm_comparison`") == "the-first-rounds-norm_comparison"
    assert slug("Liu et al.'s control: the hybrid placements at 6+6") == (
        "liu-et-als-control-the-hybrid-placements-at-66"
    )
    assert slug("See [the docs](docs/x.md) now") == "see-the-docs-now"


def test_a_missing_file_a_missing_heading_and_links_in_code_are_told_apart(tmp_path):
    """The check finds what is broken, and only that: links inside code are not links."""
    (tmp_path / "other.md").write_text("# Other\n\n## A `section`\n\n```\n# not a heading\n```\n")
    (tmp_path / "pic.png").write_bytes(b"")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n## Twice\n\n## Twice\n\n"
        "[ok](other.md) [ok](other.md#a-section) ![ok](pic.png) [ok](#twice-1) "
        "[ok](https://example.org/none.md)\n"
        "[gone](missing.md) [gone](other.md#not-a-heading) [gone](#twice-2)\n"
        "`[code](missing.md)`\n\n```\n[code](missing.md)\n```\n"
    )
    assert broken_links(page) == [
        "8: missing.md (no such file)",
        "8: other.md#not-a-heading (no such heading in other.md)",
        "8: #twice-2 (no such heading in page.md)",
    ]
