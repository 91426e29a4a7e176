"""Addition, digit by digit: two numbers to their sum, the task of the length-generalisation
studies of arithmetic (e.g. Lee et al. 2023, "Teaching arithmetic to small transformers";
Zhou et al. 2024, "Transformers can achieve length generalization but not robustly").

An example of two operands of 3 and 2 digits::

    source  3 2 1 + 5 4        (123 + 45, each number least significant digit first)
    target  8 6 1              (168, least significant digit first)

with ``reversed_digits``; without it, ``1 2 3 + 4 5`` -> ``1 6 8``. Reversed is the default:
it puts the carry where the model writes, so each output digit depends on the digits read
so far, which is what lets a small model add numbers longer than it trained on.

A split draws each operand's number of digits uniformly from its range, then the number
uniformly among those of that many digits (``0..9`` for one digit, no leading zeros
beyond), so every length is equally represented rather than dominated by the longest.
"""

from random import Random

from transformer_lab.data.examples import Example

DIGITS = tuple(str(d) for d in range(10))
PLUS = "+"
WORDS = (*DIGITS, PLUS)  # sources and targets share them


def numbers_with_digits(digits: int) -> int:
    """How many numbers have exactly ``digits`` digits: 10 for one (0 included), else
    9 x 10**(digits - 1)."""
    return 10 if digits == 1 else 9 * 10 ** (digits - 1)


def num_sources(min_digits: int, max_digits: int) -> int:
    """How many distinct sources (operand pairs) have operands of ``min..max`` digits."""
    return sum(numbers_with_digits(d) for d in range(min_digits, max_digits + 1)) ** 2


def _number(rng: Random, digits: int) -> int:
    low = 0 if digits == 1 else 10 ** (digits - 1)
    return rng.randrange(low, 10**digits)


def _written(number: int, reversed_digits: bool) -> list[str]:
    digits = list(str(number))
    return digits[::-1] if reversed_digits else digits


def example(a: int, b: int, reversed_digits: bool) -> Example:
    """The source and target words of ``a + b``."""
    source = [*_written(a, reversed_digits), PLUS, *_written(b, reversed_digits)]
    return source, _written(a + b, reversed_digits)


def draw(rng: Random, min_digits: int, max_digits: int, reversed_digits: bool) -> Example:
    """One random example whose operands have ``min..max`` digits each."""
    a, b = (_number(rng, rng.randint(min_digits, max_digits)) for _ in range(2))
    return example(a, b, reversed_digits)
