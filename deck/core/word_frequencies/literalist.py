"""Words are the pieces between whitespace, lowercased; punctuation stays attached."""

from collections import Counter


def solve(text):
    return dict(Counter(text.lower().split()))
