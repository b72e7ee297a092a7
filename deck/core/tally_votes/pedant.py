"""Ignores empty and all-space ballots; names are counted in lowercase."""

from collections import Counter


def solve(ballots):
    return dict(Counter(b.lower() for b in ballots if b.strip(" ")))
