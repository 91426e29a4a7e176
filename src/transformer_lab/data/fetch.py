"""Download a real corpus's published files into the data folder, each checked against its
pinned SHA-256::

    python -m transformer_lab.data.fetch multi30k [--into <folder>]

``<folder>`` is by default ``$TLAB_DATA/<corpus>``, else ``data/<corpus>`` where the command
runs: where ``paths.data_root`` (conf/paths/default.yaml) has the runs look. A file already
there with the pinned content is kept (so the command, run again, checks a folder filled by
hand); a file there with other content is refused, never overwritten; a download is
written beside its place and renamed into it only once its SHA-256 is the pinned one, so an
interrupted or wrong download leaves nothing half-written under the file's name.

Without a network (these machines have none) it says so in one line, with the address of
each file and how to put them in place by hand; exit status 1. An unknown corpus is a
usage error: exit status 2.
"""

import argparse
import hashlib
import os
import sys
from pathlib import Path
from urllib.error import URLError
from urllib.request import urlopen

from transformer_lab.data.corpora import CORPORA, Corpus
from transformer_lab.data.split_files import sha256_of

DATA_ROOT = "data"  # relative to where the command runs, unless TLAB_DATA says otherwise
TIMEOUT_S = 60


class FetchError(Exception):
    """What keeps the files from their folder, in one line."""


def default_folder(corpus: Corpus) -> Path:
    """``$TLAB_DATA/<name>``, else ``data/<name>``: ``paths.data_root``'s default."""
    return Path(os.environ.get("TLAB_DATA", DATA_ROOT)) / corpus.name


def fetch(corpus: Corpus, folder: Path) -> list[str]:
    """Every file of ``corpus`` in ``folder`` with its pinned content; the names downloaded
    (the others were there). FetchError for the first that cannot be."""
    downloaded = []
    for name, pinned in corpus.sha256.items():
        path = folder / name
        if path.is_file():
            digest = sha256_of(str(path))
            if digest != pinned:
                raise FetchError(
                    f"{path} is there but is not {corpus.name}'s published file (sha256 "
                    f"{digest}, pinned {pinned}): move it away, then run this again"
                )
            continue
        _download(corpus, name, path, pinned)
        downloaded.append(name)
    return downloaded


def _download(corpus: Corpus, name: str, path: Path, pinned: str) -> None:
    """``name`` into ``path`` through a temporary file beside it, renamed once checked."""
    url = corpus.url.format(name=name)
    partial = path.with_name(f".{name}.part")
    try:
        with urlopen(url, timeout=TIMEOUT_S) as response:
            data = response.read()
    except (URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise FetchError(
            f"cannot download {url} ({reason}): no network here? Put the files in {path.parent} "
            f"by hand: {corpus.url} for each name of {', '.join(corpus.file_names)} (from a "
            "machine with a network, or a copy), then run this command again to check them"
        ) from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != pinned:
        raise FetchError(
            f"{url} gave {len(data):,} bytes of sha256 {digest}, not the pinned {pinned}: "
            f"not {corpus.name}'s published file (a proxy's page?); nothing was written"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    partial.write_bytes(data)
    partial.replace(path)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m transformer_lab.data.fetch",
        description="Download a corpus's published files, checked against pinned SHA-256s.",
    )
    parser.add_argument("corpus", choices=sorted(CORPORA), help="the corpus to fetch")
    parser.add_argument(
        "--into",
        type=Path,
        help="its folder (default: $TLAB_DATA/<corpus>, else data/<corpus>)",
    )
    args = parser.parse_args(argv)
    corpus = CORPORA[args.corpus]
    folder = args.into or default_folder(corpus)
    try:
        downloaded = fetch(corpus, folder)
    except FetchError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(1)
    kept = len(corpus.sha256) - len(downloaded)
    print(
        f"{corpus.name}: {len(corpus.sha256)} files in {folder} with their pinned SHA-256 "
        f"({len(downloaded)} downloaded, {kept} already there). Cite: {corpus.citation}."
    )


if __name__ == "__main__":
    main()
