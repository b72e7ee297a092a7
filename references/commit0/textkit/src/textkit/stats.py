"""Word statistics."""

import re
from collections import Counter
from dataclasses import dataclass

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")


def words(text: str) -> list[str]:
    """Lower-cased words of `text` (letters and digits, with inner apostrophes)."""
    return [w.lower() for w in _WORD.findall(text)]


def word_counts(text: str) -> dict[str, int]:
    """How often each word occurs, most frequent first, ties alphabetical."""
    counts = Counter(words(text))
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


@dataclass
class WordStats:
    """Running statistics over the texts fed to it."""

    total: int = 0
    distinct: int = 0
    longest: str = ""

    def __post_init__(self) -> None:
        self._seen: set[str] = set()

    def feed(self, text: str) -> "WordStats":
        """Add the words of `text`; returns self so calls can chain."""
        for word in words(text):
            self.total += 1
            if word not in self._seen:
                self._seen.add(word)
                self.distinct += 1
            if len(word) > len(self.longest):
                self.longest = word
        return self

    def mean_length(self) -> float:
        """Mean length of distinct words seen; 0.0 before any."""
        if not self._seen:
            return 0.0
        return sum(len(w) for w in self._seen) / len(self._seen)
