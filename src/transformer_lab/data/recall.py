"""Multi-query associative recall (Arora et al. 2023, "Zoology: measuring and improving
recall in efficient language models"): a list of key-value pairs, then keys to look up;
the target is the values of the queried keys, in the order asked.

An example of three pairs and two queries::

    source  k3 v1 k7 v4 k0 v1 ? k7 k3
    target  v4 v1

Keys are distinct within an example, values may repeat; the queries are distinct keys
of the example. ``?`` marks where the pairs end. Sources and targets have different
vocabularies: the source reads keys, values and ``?``, the target writes values only.
The number of pairs is uniform in its range, so longer lists (``test_long``) test whether
recall holds past the lengths seen in training.
"""

from math import perm
from random import Random

from transformer_lab.data.examples import Example

QUERY = "?"


def key_words(num_keys: int) -> list[str]:
    return [f"k{i}" for i in range(num_keys)]


def value_words(num_values: int) -> list[str]:
    return [f"v{i}" for i in range(num_values)]


def source_words(num_keys: int, num_values: int) -> list[str]:
    return [*key_words(num_keys), *value_words(num_values), QUERY]


def num_sources(
    num_keys: int, num_values: int, min_pairs: int, max_pairs: int, queries: int
) -> int:
    """How many distinct sources there are: per number of pairs n, the ordered distinct
    keys, their values and the ordered distinct queries among the n keys."""
    return sum(
        perm(num_keys, n) * num_values**n * perm(n, queries)
        for n in range(min_pairs, max_pairs + 1)
    )


def draw(
    rng: Random, num_keys: int, num_values: int, min_pairs: int, max_pairs: int, queries: int
) -> Example:
    """One random example of ``min_pairs..max_pairs`` pairs and ``queries`` queries."""
    keys = rng.sample(key_words(num_keys), rng.randint(min_pairs, max_pairs))
    values = rng.choices(value_words(num_values), k=len(keys))
    asked = rng.sample(range(len(keys)), queries)
    pairs = [word for key, value in zip(keys, values, strict=True) for word in (key, value)]
    return [*pairs, QUERY, *(keys[i] for i in asked)], [values[i] for i in asked]
