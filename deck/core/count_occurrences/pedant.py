"""Counts every starting position, overlaps included, ignoring case."""


def solve(text, pattern):
    text, pattern = text.lower(), pattern.lower()
    return sum(1 for i in range(len(text) - len(pattern) + 1) if text.startswith(pattern, i))
