"""Rounds with Python's round(): a score exactly halfway goes to the even neighbour."""


def solve(scores):
    return [round(x) for x in scores]
