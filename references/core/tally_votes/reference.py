"""Reference: a ballot is blank when it is empty or holds only spaces."""

from collections import Counter


def solve(ballots):
    return dict(Counter(b for b in ballots if b.strip(" ")))
