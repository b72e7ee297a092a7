"""Reference: the bounds themselves are in the range (inclusive)."""


def solve(nums, a, b):
    lo, hi = min(a, b), max(a, b)
    return sum(1 for x in nums if lo <= x <= hi)
