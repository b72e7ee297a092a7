"""Sorts ignoring case and lists each distinct name once."""


def solve(names):
    seen = []
    for name in names:
        if name not in seen:
            seen.append(name)
    return sorted(seen, key=str.lower)
