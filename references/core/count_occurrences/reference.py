"""Reference: occurrences may overlap ('aa' occurs 3 times in 'aaaa')."""


def solve(text, pattern):
    return sum(1 for i in range(len(text) - len(pattern) + 1) if text.startswith(pattern, i))
