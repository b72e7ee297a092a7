"""Near values and plausible names: what makes a twin look like a real test.

A changed expected value must differ from the original (so the two checks cannot
both hold) and look like one the test could have meant: an integer one off, a
string the same file expects elsewhere with the same shape (`'applied'` for
`'conflict'`, `'555-0102'` for `'555-0101'`), a boolean flipped. A string with no
such neighbour and no digit to move is left alone rather than given a typo a
reader would spot. Names are made of the file's own test-name words.
"""

from __future__ import annotations

import difflib
import random
from collections.abc import Callable, Iterable

MAX_STRING_VARIANTS = 3
"""Same-shape neighbours offered per string (the closest ones)."""


def int_variants(text: str, pool: Iterable[str] = ()) -> list[str]:
    """A non-negative decimal literal's neighbours: one less (never below 0), one
    more, and the closest other value the same place expects elsewhere in `pool`."""
    n = int(text)
    out = [str(n + 1)] if n == 0 else [str(n - 1), str(n + 1)]
    others = sorted({int(p) for p in pool if p.isdigit()} - {n, n - 1, n + 1},
                    key=lambda p: (abs(p - n), p))
    return out + [str(p) for p in others[:1]]


def shape(value: str) -> str:
    """Character classes with runs collapsed: 'invalid_email' -> 'a_a', '555-0101' -> '9-9'."""
    out: list[str] = []
    for ch in value:
        cls = "a" if ch.islower() else "A" if ch.isupper() else "9" if ch.isdigit() else ch
        if not out or out[-1] != cls or cls not in "aA9":
            out.append(cls)
    return "".join(out)


def string_variants(value: str, pools: Iterable[Iterable[str]]) -> list[str]:
    """Other values of the same shape from the first of `pools` (closest pools first:
    the values the same place expects elsewhere, then the whole file's) that has
    any, closest first (in length, then in letters); else `value` with its last
    digit moved; else none."""
    want = shape(value)
    for pool in pools:
        same = sorted({p for p in pool if p != value and shape(p) == want},
                      key=lambda p: (abs(len(p) - len(value)),
                                     -difflib.SequenceMatcher(None, value, p).ratio(), p))
        if same:
            return same[:MAX_STRING_VARIANTS]
    for i in range(len(value) - 1, -1, -1):
        if value[i].isascii() and value[i].isdigit():
            digit = str((int(value[i]) + 1) % 10)
            return [value[:i] + digit + value[i + 1:]]
    return []


def bool_variant(text: str) -> str:
    flipped = "false" if text.lower() == "true" else "true"
    return flipped.upper() if text.isupper() else flipped


def fresh_name(
    words: list[str],
    vocabulary: list[str],
    taken: set[str],
    join: Callable[[list[str]], str],
    rng: random.Random,
) -> str:
    """A name not in `taken` from `words` with one word replaced, added or dropped
    (words from `vocabulary`; more are added while the names are all taken); it is
    added to `taken`."""
    pool = [w for w in vocabulary if w] or ["case"]
    made = list(words) or [rng.choice(pool)]
    for attempt in range(10_000):
        if attempt and attempt % 20 == 0:
            made = [*made, rng.choice(pool)]  # this length is crowded: one word more
        candidate = list(made)
        move = rng.randrange(3)
        if move == 0:
            candidate.insert(rng.randrange(len(candidate) + 1), rng.choice(pool))
        elif move == 1:
            candidate[rng.randrange(len(candidate))] = rng.choice(pool)
        elif len(candidate) > 2:
            del candidate[rng.randrange(len(candidate))]
        name = join(candidate)
        if name not in taken:
            taken.add(name)
            return name
    raise RuntimeError("no free test name")  # unreachable: names grow a word per 20 draws
