"""Counts non-overlapping occurrences, scanning left to right, as str.count does."""


def solve(text, pattern):
    return text.count(pattern)
