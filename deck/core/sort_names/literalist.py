"""Sorts by character codes, so every capital letter comes before every lowercase one."""


def solve(names):
    return sorted(names)
