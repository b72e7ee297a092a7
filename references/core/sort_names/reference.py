"""Reference: alphabetical ignoring case; equal names keep their input order."""


def solve(names):
    return sorted(names, key=str.lower)
