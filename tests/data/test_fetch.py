"""``python -m transformer_lab.data.fetch``: the published files into the data folder, each
checked against its pinned SHA-256; without a network one line saying so and how to place
the files by hand; nothing half-written or overwritten, ever."""

import dataclasses
import gzip
import hashlib
from urllib.error import URLError

import pytest

from transformer_lab.data import fetch
from transformer_lab.data.corpora import MULTI30K, Corpus

from ..real_corpora import MULTI30K as MULTI30K_COPY
from ..real_corpora import needs_multi30k


def served(tmp_path, files: dict[str, bytes], pinned: dict[str, bytes] | None = None) -> Corpus:
    """A corpus whose files are published as ``file://`` addresses under ``tmp_path/served``,
    pinned to the sha256 of ``pinned`` (default: what is served)."""
    origin = tmp_path / "served"
    origin.mkdir()
    for name, data in files.items():
        (origin / name).write_bytes(data)
    digests = {name: hashlib.sha256(data).hexdigest() for name, data in (pinned or files).items()}
    url = f"file://{origin}/{{name}}"
    return Corpus("tiny", ("de", "en"), {"train": "train"}, url, digests, "a test")


FILES = {"train.de.gz": gzip.compress(b"Hund\n"), "train.en.gz": gzip.compress(b"dog\n")}


def test_the_files_are_downloaded_checked_and_kept_when_fetched_again(tmp_path):
    corpus, folder = served(tmp_path, FILES), tmp_path / "data" / "tiny"
    assert fetch.fetch(corpus, folder) == ["train.de.gz", "train.en.gz"]
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == FILES
    assert fetch.fetch(corpus, folder) == []  # there with the pinned content: kept


def test_a_download_that_is_not_the_pinned_file_is_refused_and_nothing_written(tmp_path):
    corpus = served(tmp_path, FILES, pinned={**FILES, "train.en.gz": b"other"})
    folder = tmp_path / "data" / "tiny"
    with pytest.raises(fetch.FetchError, match=r"train\.en\.gz gave 24 bytes of sha256 \w+, not"):
        fetch.fetch(corpus, folder)
    assert sorted(p.name for p in folder.iterdir()) == ["train.de.gz"]  # no .part left


def test_a_file_there_with_other_content_is_refused_never_overwritten(tmp_path):
    corpus, folder = served(tmp_path, FILES), tmp_path / "tiny"
    folder.mkdir()
    (folder / "train.de.gz").write_bytes(b"mine")
    with pytest.raises(fetch.FetchError, match=r"is there but is not tiny's published file"):
        fetch.fetch(corpus, folder)
    assert (folder / "train.de.gz").read_bytes() == b"mine"


def test_without_a_network_one_line_says_so_and_how_to_place_the_files_by_hand(
    tmp_path, monkeypatch, capsys
):
    def no_network(url, timeout):
        raise URLError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(fetch, "urlopen", no_network)
    with pytest.raises(SystemExit) as exit:
        fetch.main(["multi30k", "--into", str(tmp_path / "m30k")])
    assert exit.value.code == 1
    (line,) = capsys.readouterr().err.splitlines()
    raw = "https://github.com/multi30k/dataset/raw/a3d2e0d26b56f3846f66a952536ffed4e401d05a"
    assert line.startswith(
        f"error: cannot download {raw}/data/task1/raw/train.de.gz ([Errno -3] Temporary failure "
        f"in name resolution): no network here? Put the files in {tmp_path / 'm30k'} by hand: "
        f"{raw}/data/task1/raw/{{name}} for each name of train.de.gz, train.en.gz, "
    )
    assert line.endswith("then run this command again to check them")
    assert not (tmp_path / "m30k").exists()  # no folder made for nothing


def test_an_unknown_corpus_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit:
        fetch.main(["multi31k"])
    assert exit.value.code == 2 and "invalid choice: 'multi31k'" in capsys.readouterr().err


def test_the_default_folder_is_where_data_multi30k_looks(compose_train, monkeypatch):
    monkeypatch.delenv("TLAB_DATA", raising=False)
    assert compose_train(["data=multi30k"]).data.data_dir == "data/multi30k"
    assert str(fetch.default_folder(MULTI30K)) == "data/multi30k"
    monkeypatch.setenv("TLAB_DATA", "/srv/corpora")
    assert compose_train(["data=multi30k"]).data.data_dir == "/srv/corpora/multi30k"
    assert str(fetch.default_folder(MULTI30K)) == "/srv/corpora/multi30k"


@needs_multi30k
def test_the_pinned_hashes_are_those_of_the_published_multi30k_files(tmp_path, capsys):
    """The real files (these machines' copy, served as file:// addresses) pass the pins."""
    corpus = dataclasses.replace(MULTI30K, url=f"file://{MULTI30K_COPY}/{{name}}")
    assert fetch.fetch(corpus, tmp_path / "multi30k") == list(MULTI30K.sha256)
