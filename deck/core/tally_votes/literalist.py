"""Only the empty string is a blank ballot; a ballot of spaces names a candidate."""

from collections import Counter


def solve(ballots):
    return dict(Counter(b for b in ballots if b != ""))
