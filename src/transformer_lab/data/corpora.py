"""The real corpora the lab knows by name: where each is published, pinned to a commit, and
the SHA-256 of every file, so that a download (:mod:`.fetch`) and every run that reads one
(:mod:`.multi30k`) can tell the published files from anything else.

The repository never holds a data set: a corpus is read from a data folder, which
``python -m transformer_lab.data.fetch <name>`` fills, or a user fills by hand.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Corpus:
    """``splits``: the lab's split -> the corpus's name of it (the file stem); each split is
    one file per language, ``<stem>.<lang>.gz``, aligned line by line. ``url``: where one
    file is published, with ``{name}`` for the file's name. ``sha256``: file name -> its
    hex digest, of every file the corpus publishes that the lab reads."""

    name: str
    languages: tuple[str, ...]
    splits: dict[str, str]
    url: str
    sha256: dict[str, str]
    citation: str

    def file_name(self, split: str, lang: str) -> str:
        return f"{self.splits[split]}.{lang}.gz"

    @property
    def file_names(self) -> list[str]:
        return list(self.sha256)


MULTI30K_COMMIT = "a3d2e0d26b56f3846f66a952536ffed4e401d05a"
MULTI30K = Corpus(
    name="multi30k",
    languages=("de", "en", "fr"),
    splits={"train": "train", "val": "val", "test": "test_2016_flickr"},
    url=f"https://github.com/multi30k/dataset/raw/{MULTI30K_COMMIT}/data/task1/raw/{{name}}",
    sha256={
        "train.de.gz": "726e39b2fa9eb9ffb6dc763fb35a179f80fae06ffc5d28b6ace5faa883de28a6",
        "train.en.gz": "d79cfa999dd4c51d2cb42499b6796d5a882c3a8a961923c25a898c90f8bbd56f",
        "train.fr.gz": "622e75069e9f4c577425c4f277116ce66e63a2401c0a2312d90073cb12379a3c",
        "val.de.gz": "f0cba2f995189cf5770f29a8a9a537a3ad3f51657ad873405082ff6863a5e75a",
        "val.en.gz": "14f7d25ddd868909a9213e361768460edcacdd6ab9d1e77b92560dc10c10dc28",
        "val.fr.gz": "ca3106f1a72390591d25f6c45cb4cd39dec4cd3f123e099748a3ce5256c160e9",
        "test_2016_flickr.de.gz": (
            "9204244e408ccb38d2a55cfcd344df15005fc42a07a6e55ca6c52b6ababb8cc8"
        ),
        "test_2016_flickr.en.gz": (
            "611d361c6334bc7246101d48097c13cf5c4413c5befc793cc629934359d532d9"
        ),
        "test_2016_flickr.fr.gz": (
            "6d326e188d259fb1d04ac19eae3af956559b3a0b93d7635e56c90987c40c8b90"
        ),
    },
    citation=(
        "Elliott, Frank, Sima'an and Specia (2016), Multi30K: Multilingual English-German "
        "Image Descriptions"
    ),
)
CORPORA = {corpus.name: corpus for corpus in (MULTI30K,)}
